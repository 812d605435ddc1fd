package dev.kvrouter.jobs.view.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class BlockHoldersTest {

    private static Holder holder(String engine, long storedAt) {
        Holder h = new Holder();
        h.engine = engine;
        h.storedAtMs = storedAt;
        return h;
    }

    private static String[] engines(BlockHolders b) {
        return IntStream.range(0, b.size()).mapToObj(i -> b.get(i).engine).toArray(String[]::new);
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

    @Test
    void anyMixOfAddingReplacingAndRemovingKeepsWhatASortedMapWouldAndNeverChangesAValue() {
        Random random = new Random(14);
        for (int run = 0; run < 200; run++) {
            TreeMap<String, Long> expected = new TreeMap<>();
            BlockHolders b = BlockHolders.EMPTY;
            List<BlockHolders> seen = new ArrayList<>();
            List<String[]> seenEngines = new ArrayList<>();
            for (int step = 0; step < 30; step++) {
                String engine = "e" + random.nextInt(6);
                if (random.nextInt(3) == 0) {
                    expected.remove(engine);
                    b = b.without(engine);
                } else {
                    long storedAt = random.nextInt(1000);
                    expected.put(engine, storedAt);
                    b = b.with(holder(engine, storedAt));
                }
                assertThat(engines(b)).containsExactlyElementsOf(expected.keySet());
                assertThat(b.size()).isEqualTo(expected.size());
                assertThat(b.isEmpty()).isEqualTo(expected.isEmpty());
                for (var e : expected.entrySet()) {
                    assertThat(b.find(e.getKey()).storedAtMs).isEqualTo(e.getValue());
                }
                seen.add(b);
                seenEngines.add(engines(b));
            }
            for (int i = 0; i < seen.size(); i++) {
                assertThat(engines(seen.get(i))).as("never changed once made").containsExactly(seenEngines.get(i));
            }
        }
    }
}
