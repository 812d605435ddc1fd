package dev.kvrouter.balancer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.contract.ViewLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The match's search against the reference that reads every block ({@link PickPolicy#consecutiveRuns}),
 * on random views: the same runs wherever the view keeps the prefix property, and where it does not,
 * a run never shorter than the consecutive one that ends on a held block followed by one not held.
 */
class PickPolicyTest {

    private static final long NOW = 1_000_000_000L;
    private static final long TAU = 600_000;
    private static final double FLOOR = 0.05;
    private static final List<String> ENGINES = List.of("e1", "e2", "e3", "e4");

    @Test
    void whereEveryEngineHoldsAPrefixTheSearchFindsTheConsecutiveRun() {
        Random random = new Random(7);
        for (int trial = 0; trial < 2_000; trial++) {
            int n = 1 + random.nextInt(trial % 10 == 0 ? 3_000 : 80);
            Map<String, EngineEntry> engines = engines(random);
            List<Map<String, String>> entries = emptyBlocks(n);
            for (String id : ENGINES) {
                int held = random.nextInt(n + 1);
                long stored = NOW - (long) (random.nextDouble() * 2 * TAU);
                for (int p = 1; p <= held; p++) {
                    entries.get(p - 1).put(id, ViewLayout.holder(id, stored, 1));
                }
                // Past the run: nothing, an old epoch, or entries lapsed below the floor — never a counting one.
                for (int p = held + 1; p <= n && random.nextInt(3) > 0; p++) {
                    boolean oldEpoch = random.nextBoolean();
                    entries.get(p - 1).put(id, ViewLayout.holder(id, oldEpoch ? stored : NOW - 4 * TAU, oldEpoch ? 0 : 1));
                }
            }
            List<String> blocks = values(entries);
            assertThat(PickPolicy.match(engines, blocks, NOW, FLOOR)).as("trial %d, %d blocks", trial, n)
                    .isEqualTo(PickPolicy.consecutiveRuns(engines, blocks, NOW, FLOOR));
        }
    }

    @Test
    void whereTheViewHasHolesTheRunIsNeverShorterAndEndsOnAHeldBlockBeforeOneNotHeld() {
        Random random = new Random(11);
        int longer = 0;
        for (int trial = 0; trial < 2_000; trial++) {
            int n = 2 + random.nextInt(200);
            Map<String, EngineEntry> engines = engines(random);
            List<Map<String, String>> entries = emptyBlocks(n);
            for (String id : ENGINES) {
                double density = random.nextDouble();
                for (int p = 1; p <= n; p++) {
                    if (p == 1 || random.nextDouble() < density) {
                        entries.get(p - 1).put(id, ViewLayout.holder(id, NOW - (long) (random.nextDouble() * 3.2 * TAU), 1));
                    }
                }
            }
            List<String> blocks = values(entries);
            Map<String, PickPolicy.Run> found = PickPolicy.match(engines, blocks, NOW, FLOOR);
            Map<String, PickPolicy.Run> consecutive = PickPolicy.consecutiveRuns(engines, blocks, NOW, FLOOR);
            assertThat(found.keySet()).isEqualTo(consecutive.keySet());
            for (var run : found.entrySet()) {
                String id = run.getKey();
                int depth = run.getValue().depth();
                assertThat(depth).isGreaterThanOrEqualTo(consecutive.get(id).depth());
                assertThat(single(engines, blocks, depth, id)).as("the run's last block is held").isNotNull();
                if (depth < n) {
                    assertThat(single(engines, blocks, depth + 1, id)).as("the block after the run is not").isNull();
                }
                assertThat(run.getValue().confidence()).isEqualTo(single(engines, blocks, depth, id).confidence());
                if (depth > consecutive.get(id).depth()) {
                    longer++;
                }
            }
        }
        assertThat(longer).as("holes were passed over in some trials: the case is exercised").isPositive();
    }

    /** The engine's run if the prompt were only block {@code p}: its confidence there, or null when it does not count. */
    private static PickPolicy.Run single(Map<String, EngineEntry> engines, List<String> blocks, int p, String id) {
        List<String> one = new ArrayList<>();
        one.add(blocks.get(p - 1));
        return PickPolicy.consecutiveRuns(engines, one, NOW, FLOOR).get(id);
    }

    private static Map<String, EngineEntry> engines(Random random) {
        Map<String, EngineEntry> engines = new HashMap<>();
        for (String id : ENGINES) {
            engines.put(id, new EngineEntry("READY", 0, 0, 500, TAU, 1, random.nextInt(4) == 0, NOW));
        }
        return engines;
    }

    private static List<Map<String, String>> emptyBlocks(int n) {
        List<Map<String, String>> entries = new ArrayList<>();
        for (int p = 0; p < n; p++) {
            entries.add(new java.util.TreeMap<>());
        }
        return entries;
    }

    /** Each block's field value as the view writes it (holders sorted by engine), null for none. */
    private static List<String> values(List<Map<String, String>> entries) {
        List<String> blocks = new ArrayList<>();
        for (Map<String, String> e : entries) {
            blocks.add(e.isEmpty() ? null : String.join(",", e.values()));
        }
        return blocks;
    }
}
