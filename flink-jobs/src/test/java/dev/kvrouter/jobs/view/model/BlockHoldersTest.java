package dev.kvrouter.jobs.view.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class BlockHoldersTest {

    private static Holder holder(String engine, long storedAt) {
        Holder h = new Holder();
        h.engine = engine;
        h.storedAtMs = storedAt;
        return h;
    }

    private static String[] engines(BlockHolders b) {
        return Arrays.stream(b.holders).map(h -> h.engine).toArray(String[]::new);
    }

    @Test
    void holdersStaySortedByEngineAndAnEnginesNewHolderReplacesItsOld() {
        BlockHolders b = BlockHolders.EMPTY.with(holder("e2", 1)).with(holder("e10", 2)).with(holder("e1", 3));
        assertThat(engines(b)).containsExactly("e1", "e10", "e2");
        BlockHolders replaced = b.with(holder("e10", 9));
        assertThat(engines(replaced)).containsExactly("e1", "e10", "e2");
        assertThat(replaced.find("e10").storedAtMs).isEqualTo(9);
        assertThat(b.find("e10").storedAtMs).as("never changed once stored").isEqualTo(2);
        assertThat(b.find("e3")).isNull();
    }

    @Test
    void removingTheLastHolderLeavesTheEmptyValue() {
        BlockHolders b = BlockHolders.EMPTY.with(holder("e1", 1)).with(holder("e2", 2));
        assertThat(engines(b.without("e1"))).containsExactly("e2");
        assertThat(b.without("e9")).isSameAs(b);
        assertThat(b.without("e1").without("e2")).isSameAs(BlockHolders.EMPTY);
        assertThat(BlockHolders.EMPTY.isEmpty()).isTrue();
        assertThat(engines(b)).as("unchanged").containsExactly("e1", "e2");
    }
}
