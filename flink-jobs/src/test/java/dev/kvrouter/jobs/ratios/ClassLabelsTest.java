package dev.kvrouter.jobs.ratios;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The balancers' class labels the ratios keep apart: bounded, whatever a balancer sends. */
class ClassLabelsTest {

    @Test
    void pastTheCapANewLabelIsCountedUnderOtherWhileTheKnownOnesKeepTheirs() {
        ClassLabels labels = new ClassLabels(2, 60_000);
        assertThat(labels.admit("chat", 0)).isEqualTo("chat");
        assertThat(labels.admit("rag", 1)).isEqualTo("rag");
        assertThat(labels.admit("tenant-3", 2)).isEqualTo(ClassLabels.OTHER);
        assertThat(labels.admit("chat", 3)).isEqualTo("chat");
        assertThat(labels.overflowed()).isEqualTo(1);
        assertThat(labels.size()).isEqualTo(2);
    }

    @Test
    void aLabelNotSeenForTheIdleTimeGivesItsPlaceToANewOne() {
        ClassLabels labels = new ClassLabels(2, 60_000);
        labels.admit("chat", 0);
        labels.admit("rag", 10_000);
        labels.admit("chat", 50_000); // chat seen again: rag is now the least recently seen
        assertThat(labels.admit("tenant-3", 60_001)).as("chat was seen 10 s ago, rag 50 s: neither idle for 60 s").isEqualTo(ClassLabels.OTHER);
        assertThat(labels.admit("tenant-3", 70_001)).as("rag idle past 60 s").isEqualTo("tenant-3");
        assertThat(labels.admit("rag", 70_002)).as("rag comes back to a full table").isEqualTo(ClassLabels.OTHER);
        assertThat(labels.size()).isEqualTo(2);
    }

    @Test
    void aLabelTooLongOrWithControlCharactersIsOtherAndTakesNoPlace() {
        ClassLabels labels = new ClassLabels(4, 60_000);
        assertThat(labels.admit("x".repeat(ClassLabels.MAX_LENGTH + 1), 0)).isEqualTo(ClassLabels.OTHER);
        assertThat(labels.admit("a\nb", 0)).isEqualTo(ClassLabels.OTHER);
        assertThat(labels.admit("x".repeat(ClassLabels.MAX_LENGTH), 0)).hasSize(ClassLabels.MAX_LENGTH);
        assertThat(labels.size()).isEqualTo(1);
    }
}
