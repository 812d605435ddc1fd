package dev.kvrouter.jobs.view.functions;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.events.EngineHealth;
import dev.kvrouter.jobs.io.LocationUpdate;
import dev.kvrouter.jobs.view.model.EngineStatus;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class UseConfirmerTest {

    private KeyedTwoInputStreamOperatorTestHarness<String, EngineStatus, LocationUpdate, LocationUpdate> harness;

    @BeforeEach
    void open() throws Exception {
        // Three residencies to the floor (0.05 ≈ e^-3).
        harness = ProcessFunctionTestHarnesses.forKeyedCoProcessFunction(new UseConfirmer(3.0),
                s -> s.engine, u -> u.engine, Types.STRING);
    }

    @AfterEach
    void close() throws Exception {
        harness.close();
    }

    @Test
    void aUseIsStampedWithTheEnginesEpochAndAnEntrysLifeThere() throws Exception {
        harness.processElement2(use(500), 500);
        assertThat(harness.extractOutputValues()).as("an engine the job has not seen yet").isEmpty();

        harness.processElement1(status("READY", 0, 2_000, 1_000), 1_000);
        harness.processElement2(use(1_500), 1_500);
        LocationUpdate stamped = harness.extractOutputValues().get(0);
        assertThat(stamped.confirmed).isTrue();
        assertThat(stamped.epoch).isZero();
        assertThat(stamped.storedAtMs).isEqualTo(1_500);
        assertThat(stamped.expireAtMs).isEqualTo(1_500 + 3 * 2_000);
        assertThat(stamped.tag).isEqualTo(7);

        harness.processElement1(status("READY", 0, 1_000, 2_000), 2_000);
        harness.processElement2(use(2_100), 2_100);
        assertThat(harness.extractOutputValues().get(1).expireAtMs).as("the residency as last reported").isEqualTo(2_100 + 3_000);
    }

    @Test
    void aUseFromBeforeTheEnginesCurrentCacheOrOfADeadEngineIsDroppedAndNothingIsKept() throws Exception {
        harness.processElement1(status("READY", 0, 2_000, 1_000), 1_000);
        harness.processElement1(status("RESTARTED", 1, 2_000, 5_000), 5_000);
        harness.processElement1(status("READY", 1, 2_000, 5_500), 5_500);
        harness.processElement2(use(4_800), 5_600);
        harness.processElement2(use(5_200), 5_600);
        assertThat(harness.extractOutputValues()).extracting(u -> u.storedAtMs).containsExactly(5_200L);
        assertThat(harness.extractOutputValues().get(0).epoch).isEqualTo(1);

        harness.processElement1(status("DEAD", 2, 2_000, 9_000), 9_000);
        harness.processElement2(use(9_100), 9_100);
        assertThat(harness.extractOutputValues()).hasSize(1);
        assertThat(harness.numKeyedStateEntries()).isZero();
        assertThat(harness.numProcessingTimeTimers()).isZero();
    }

    private static EngineStatus status(String health, long epoch, long residencyMs, long tsMs) {
        EngineStatus s = new EngineStatus();
        s.engine = "e1";
        s.currentHealth = EngineHealth.valueOf(health);
        s.epoch = epoch;
        s.residencyMs = residencyMs;
        s.tsMs = tsMs;
        return s;
    }

    private static LocationUpdate use(long atMs) {
        return LocationUpdate.confirm(42, 7, "e1", atMs, 0, 0);
    }
}
