package dev.kvrouter.jobs.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.events.EngineHealth;
import dev.kvrouter.jobs.policy.ReplicaTargets.Engine;
import dev.kvrouter.jobs.policy.ReplicaTargets.Plan;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReplicaTargetsTest {

    private static Map<String, Engine> fleet(Engine... engines) {
        Map<String, Engine> m = new LinkedHashMap<>();
        for (Engine e : engines) {
            m.put(e.id(), e);
        }
        return m;
    }

    private static Engine ready(String id, double load) {
        return new Engine(id, EngineHealth.READY, load, false);
    }

    @Test
    void aPrefixOnOneEngineGetsASecondOnTheLeastLoadedOther() {
        // mean = (4 + 2 + 1 + 3) / 4 = 2.5; e1 (4) holds it and is above the mean, alone: target max = 3
        Plan p = ReplicaTargets.plan(List.of("e1"), fleet(ready("e1", 4), ready("e2", 2), ready("e3", 1), ready("e4", 3)), 2, 3, 2);
        assertThat(p).isEqualTo(new Plan(3, 1, List.of("e3", "e2"), "e1"));
    }

    @Test
    void holdersAtOrBelowTheMeanNeedOnlyTheMinimum() {
        // mean = (1 + 5 + 3) / 3 = 3; e1 (1) is below it: target min = 2, one missing
        Plan p = ReplicaTargets.plan(List.of("e1"), fleet(ready("e1", 1), ready("e2", 5), ready("e3", 3)), 2, 3, 2);
        assertThat(p).isEqualTo(new Plan(2, 1, List.of("e3"), "e1"));
    }

    @Test
    void enoughLiveReplicasMeansNothingToDo() {
        Plan p = ReplicaTargets.plan(List.of("e1", "e2"), fleet(ready("e1", 1), ready("e2", 1), ready("e3", 7)), 2, 3, 2);
        assertThat(p).isEqualTo(new Plan(2, 2, List.of(), "e1"));
    }

    @Test
    void suspectDeadAndUnknownHoldersAreNotLiveAndUnfitEnginesAreNotChosen() {
        Map<String, Engine> f = fleet(new Engine("e1", EngineHealth.SUSPECT, 0, false), new Engine("e2", EngineHealth.BUSY, 9, false),
                new Engine("e3", EngineHealth.READY, 0, true), new Engine("e4", EngineHealth.DRAINING, 0, false), ready("e5", 1), ready("e6", 20));
        // mean = (0 + 9 + 0 + 0 + 1 + 20) / 6 = 5; live holders: e2 only (above the mean) -> target 3, 2 missing;
        // e3 is unsynced, e4 draining, e6 hot (20 > 2 x 5): only e5 qualifies.
        Plan p = ReplicaTargets.plan(List.of("e1", "e2", "gone"), f, 2, 3, 2);
        assertThat(p).isEqualTo(new Plan(3, 1, List.of("e5"), "e2"));
    }

    @Test
    void aHotPrefixNobodyHoldsIsWarmedOnTheMinimumOfIdleEngines() {
        Plan p = ReplicaTargets.plan(List.of(), fleet(ready("b", 0), ready("a", 0), ready("c", 0)), 2, 3, 2);
        assertThat(p).isEqualTo(new Plan(2, 0, List.of("a", "b"), null));
    }
}
