package dev.kvrouter.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.bridge.SequenceTracker.Verdict;
import org.junit.jupiter.api.Test;

class SequenceTrackerTest {

    @Test
    void firstNextGapAndRestartAsTheJobJudgesThem() {
        SequenceTracker t = new SequenceTracker();
        assertThat(t.observe(5)).isEqualTo(new Verdict.First(5));
        assertThat(t.observe(6)).isEqualTo(new Verdict.Next(6));
        Verdict gap = t.observe(9);
        assertThat(gap).isEqualTo(new Verdict.Gap(7, 8, 9));
        assertThat(((Verdict.Gap) gap).missing()).isEqualTo(2);
        // Backwards, and equal too: EngineTracker treats seq <= last as a restart.
        assertThat(t.observe(0)).isEqualTo(new Verdict.Restart(9, 0));
        assertThat(t.observe(0)).isEqualTo(new Verdict.Restart(0, 0));
        assertThat(t.observe(1)).isEqualTo(new Verdict.Next(1));
        assertThat(t.last()).isEqualTo(1);
    }
}
