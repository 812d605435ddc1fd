package dev.kvrouter.jobs.view.functions;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.events.EngineHealth;
import dev.kvrouter.jobs.io.HotPrefix;
import dev.kvrouter.jobs.view.model.EngineStatus;
import dev.kvrouter.replicas.ReplicationRecommendation;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ReplicaPlannerTest {

    private KeyedTwoInputStreamOperatorTestHarness<String, HotPrefix, EngineStatus, ReplicationRecommendation> harness;

    @BeforeEach
    void open() throws Exception {
        harness = ProcessFunctionTestHarnesses.forKeyedCoProcessFunction(new ReplicaPlanner(2, 3, 2.0),
                p -> "fleet", s -> "fleet", Types.STRING);
        harness.setProcessingTime(5_000);
    }

    @AfterEach
    void close() throws Exception {
        harness.close();
    }

    private static EngineStatus status(String engine, String health, int running) {
        EngineStatus s = new EngineStatus();
        s.engine = engine;
        s.currentHealth = EngineHealth.valueOf(health);
        s.running = running;
        return s;
    }

    private static HotPrefix hot(String... holders) {
        HotPrefix p = new HotPrefix();
        p.rootBlock = 0x1234;
        p.prefixBlocks = new long[] {0x1234, 0x5678};
        p.prefixClass = "app-a";
        p.requests = 60;
        p.exemplarRequestId = "r-9";
        p.holders = holders;
        return p;
    }

    @Test
    void aHotPrefixShortOfReplicasIsRecommendedOnTheLeastLoadedReadyEngine() throws Exception {
        harness.processElement2(status("e1", "READY", 1), 1);
        harness.processElement2(status("e2", "READY", 2), 1);
        harness.processElement2(status("e3", "READY", 0), 1);
        harness.processElement1(hot("e1"), 2);
        // mean = 1; e1 (1) is not above it: target 2, one missing, e3 the least loaded
        List<ReplicationRecommendation> out = harness.extractOutputValues();
        assertThat(out).hasSize(1);
        ReplicationRecommendation r = out.get(0);
        assertThat(r.getEngineId()).isEqualTo("e3");
        assertThat(r.getSourceEngine()).isEqualTo("e1");
        assertThat(r.getHolders()).containsExactly("e1");
        assertThat(r.getLiveReplicas()).isEqualTo(1);
        assertThat(r.getTargetReplicas()).isEqualTo(2);
        assertThat(r.getPrefixBlockHashes()).containsExactly(0x1234L, 0x5678L);
        assertThat(r.getPrefixClass()).isEqualTo("app-a");
        assertThat(r.getRequests()).isEqualTo(60);
        assertThat(r.getExemplarRequestId()).isEqualTo("r-9");
        assertThat(r.getTsMs()).isEqualTo(5_000);
        assertThat(r.getReason()).contains("1 live replica(s) of a target of 2", "warm it on e3", "copy from e1");
    }

    @Test
    void aDeadEngineLeavesTheStateAndIsNeitherReplicaNorTarget() throws Exception {
        harness.processElement2(status("e1", "READY", 0), 1);
        harness.processElement2(status("e2", "READY", 0), 1);
        harness.processElement2(status("e2", "DEAD", 0), 2);
        assertThat(harness.numKeyedStateEntries()).isEqualTo(1);
        harness.processElement1(hot("e2"), 3);
        assertThat(harness.extractOutputValues()).extracting(ReplicationRecommendation::getEngineId).containsExactly("e1");
        assertThat(harness.extractOutputValues().get(0).getLiveReplicas()).isZero();
        harness.processElement2(status("e1", "DEAD", 0), 4);
        assertThat(harness.numKeyedStateEntries()).as("no engine left, no state").isZero();
        assertThat(harness.numProcessingTimeTimers()).isZero();
    }
}
