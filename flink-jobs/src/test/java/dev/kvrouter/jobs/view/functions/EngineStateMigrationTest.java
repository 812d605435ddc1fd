package dev.kvrouter.jobs.view.functions;

import static dev.kvrouter.jobs.view.functions.EngineStateSnapshots.batch;
import static dev.kvrouter.jobs.view.functions.EngineStateSnapshots.load;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.events.EngineHealth;
import dev.kvrouter.events.EngineLifecycle;
import dev.kvrouter.events.EngineRole;
import dev.kvrouter.jobs.io.HotPrefix;
import dev.kvrouter.jobs.view.model.EngineHealthState;
import dev.kvrouter.jobs.view.model.EngineStatus;
import dev.kvrouter.replicas.ReplicationRecommendation;
import java.util.List;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;
import org.junit.jupiter.api.Test;

/**
 * State version 1 (health, lifecycle and role as strings, pinned by {@link EngineStateSnapshots})
 * restored by this version (the Avro enums): nothing the engine tracker knew is lost, and the replica
 * planner waits for each engine's next status rather than guess.
 */
class EngineStateMigrationTest {

    private static final long RESTORED_AT_MS = EngineStateSnapshots.TAKEN_AT_MS + 1_000;

    private static String snapshot(String operator, int version) {
        return EngineStateMigrationTest.class.getResource("/state-snapshots/" + operator + "-v" + version + ".snapshot").getPath();
    }

    private static <T extends AbstractStreamOperatorTestHarness<?>> T restore(T harness, String operator) throws Exception {
        harness.setup();
        harness.initializeState(OperatorSnapshotUtil.readStateHandle(snapshot(operator, 1)));
        harness.open();
        return harness;
    }

    private static EngineHealthState healthOf(AbstractStreamOperatorTestHarness<?> harness, String engine) throws Exception {
        KeyedStateBackend<Object> backend = ((AbstractStreamOperator<?>) harness.getOperator()).getKeyedStateBackend();
        backend.setCurrentKey(engine);
        return backend.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE,
                new ValueStateDescriptor<>(EngineTracker.HEALTH_STATE, TypeInformation.of(EngineHealthState.class))).value();
    }

    @Test
    @SuppressWarnings("deprecation")
    void theTrackersVersionOneStateKeepsEveryEnginesHealthLifecycleAndRole() throws Exception {
        try (var tracker = restore(EngineStateSnapshots.engineTracker(), "engine-tracker")) {
            record Expected(String engine, EngineHealth health, EngineLifecycle lifecycle, EngineRole role) {}
            for (Expected e : List.of(
                    new Expected("e1", EngineHealth.READY, EngineLifecycle.READY, EngineRole.BOTH),
                    new Expected("e2", EngineHealth.READY, EngineLifecycle.READY, EngineRole.DECODE),
                    new Expected("e3", EngineHealth.DRAINING, EngineLifecycle.DRAINING, EngineRole.BOTH),
                    new Expected("e4", EngineHealth.SUSPECT, EngineLifecycle.UNKNOWN, EngineRole.BOTH))) {
                EngineHealthState h = healthOf(tracker, e.engine());
                assertThat(h.currentHealth).as("%s before its first use: version 1 left the enums unset", e.engine()).isNull();
                assertThat(h.health).isEqualTo(e.health().name());
                h.upgrade();
                assertThat(h.currentHealth).as(e.engine()).isEqualTo(e.health());
                assertThat(h.reportedLifecycle).as(e.engine()).isEqualTo(e.lifecycle());
                assertThat(h.servingRole).as(e.engine()).isEqualTo(e.role());
                assertThat(h.health).as("the strings go once carried over").isNull();
                assertThat(h.lifecycle).isNull();
                assertThat(h.role).isNull();
            }
            assertThat(healthOf(tracker, "e1").slots).as("the rest of the state as it was").isEqualTo(8);
        }
    }

    @Test
    void theRestoredTrackerCarriesOnFromWhatItKnew() throws Exception {
        try (var tracker = restore(EngineStateSnapshots.engineTracker(), "engine-tracker")) {
            tracker.setProcessingTime(RESTORED_AT_MS);
            // e4 was suspect: its next batch brings it back, and says from what.
            tracker.processElement1(batch("e4", 1, RESTORED_AT_MS), RESTORED_AT_MS);
            // e2 publishes a load refresh, with the role it reported before the snapshot.
            tracker.processElement1(batch("e2", 0, RESTORED_AT_MS), RESTORED_AT_MS);
            List<EngineStatus> out = tracker.getSideOutput(EngineTracker.ENGINE_STATUS).stream().map(StreamRecord::getValue).toList();
            EngineStatus e4 = out.stream().filter(s -> s.engine.equals("e4")).findFirst().orElseThrow();
            assertThat(e4.changed).isTrue();
            assertThat(e4.previousHealth).isEqualTo(EngineHealth.SUSPECT);
            assertThat(e4.currentHealth).isEqualTo(EngineHealth.READY);
            EngineStatus e2 = out.stream().filter(s -> s.engine.equals("e2")).findFirst().orElseThrow();
            assertThat(e2.servingRole).isEqualTo(EngineRole.DECODE);
            assertThat(e2.currentHealth).isEqualTo(EngineHealth.READY);
            // e3 still reports itself draining: a load report with nothing new keeps it so.
            tracker.processElement2(load("e3", 0, 1, EngineLifecycle.DRAINING, EngineRole.BOTH, RESTORED_AT_MS), RESTORED_AT_MS);
            assertThat(tracker.getSideOutput(EngineTracker.ENGINE_STATUS).stream().map(StreamRecord::getValue)
                    .filter(s -> s.engine.equals("e3") && s.changed)).as("no health change for e3").isEmpty();
        }
    }

    @Test
    void theRestoredPlannerTargetsNoEngineUntilItsNextStatus() throws Exception {
        var planner = restore(EngineStateSnapshots.replicaPlanner(), "replica-planner");
        try (planner) {
            planner.setProcessingTime(RESTORED_AT_MS);
            HotPrefix hot = new HotPrefix();
            hot.rootBlock = 0x1234;
            hot.prefixBlocks = new long[] {0x1234};
            hot.prefixClass = "app-a";
            hot.requests = 60;
            hot.exemplarRequestId = "r-1";
            hot.holders = new String[] {"e1"};
            assertThat(planner.numKeyedStateEntries()).as("the version-1 entries are restored").isGreaterThan(0);
            planner.processElement1(hot, RESTORED_AT_MS);
            assertThat(planner.extractOutputValues()).as("health unknown: no target").isEmpty();
            for (EngineStatus s : EngineStateSnapshots.fleet()) {
                planner.processElement2(s, RESTORED_AT_MS);
            }
            planner.processElement1(hot, RESTORED_AT_MS);
            List<ReplicationRecommendation> out = planner.extractOutputValues();
            assertThat(out).extracting(ReplicationRecommendation::getEngineId).as("e2 is the decode pool").containsExactly("e3");
        }
    }

    @Test
    void freshStateStartsUnknownUnifiedAndNeedsNoUpgrade() {
        EngineHealthState h = EngineHealthState.fresh(600_000);
        assertThat(h.currentHealth).isEqualTo(EngineHealth.UNKNOWN);
        assertThat(h.reportedLifecycle).isEqualTo(EngineLifecycle.UNKNOWN);
        assertThat(h.servingRole).isEqualTo(EngineRole.BOTH);
        h.currentHealth = EngineHealth.BUSY;
        assertThat(h.upgrade().currentHealth).as("a version-2 state is left as it is").isEqualTo(EngineHealth.BUSY);
    }
}
