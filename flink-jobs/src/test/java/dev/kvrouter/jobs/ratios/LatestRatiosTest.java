package dev.kvrouter.jobs.ratios;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.metrics.ClassRatios;
import dev.kvrouter.metrics.WindowKind;
import dev.kvrouter.redis.ViewWrite;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The latest ratios of each class in Redis, and their fields removed once the class has reported nothing for the retention. */
class LatestRatiosTest {

    private static final long RETENTION = 60_000;
    private KeyedOneInputStreamOperatorTestHarness<String, ClassRatios, ViewWrite> h;

    @BeforeEach
    void open() throws Exception {
        h = ProcessFunctionTestHarnesses.forKeyedProcessFunction(new LatestRatios(RETENTION), ClassRatios::getPrefixClass, Types.STRING);
        h.setProcessingTime(0);
    }

    @AfterEach
    void close() throws Exception {
        h.close();
    }

    @Test
    void eachWindowIsWrittenAndAClassSilentForTheRetentionLeavesRedisWithNothingKept() throws Exception {
        h.processElement(window("tenant-9", WindowKind.TUMBLING, 10_000), 0);
        h.processElement(window("tenant-9", WindowKind.SLIDING, 10_000), 0);
        assertThat(h.extractOutputValues()).extracting(w -> w.field).containsExactly("tenant-9/tumbling", "tenant-9/sliding");
        assertThat(h.extractOutputValues()).allMatch(w -> w.value != null && w.value.startsWith("10000|"));
        assertThat(h.numProcessingTimeTimers()).isEqualTo(1);

        h.setProcessingTime(RETENTION);
        assertThat(h.extractOutputValues()).as("silent for the retention exactly: kept").hasSize(2);
        h.setProcessingTime(RETENTION + 1);
        assertThat(h.extractOutputValues().subList(2, 4)).extracting(w -> w.kind, w -> w.field, w -> w.value).containsExactly(
                org.assertj.core.groups.Tuple.tuple(ViewWrite.Kind.RATIOS, "tenant-9/tumbling", null),
                org.assertj.core.groups.Tuple.tuple(ViewWrite.Kind.RATIOS, "tenant-9/sliding", null));
        assertThat(h.numProcessingTimeTimers()).isZero();
        assertThat(h.numKeyedStateEntries()).as("nothing kept for a class gone").isZero();
    }

    @Test
    void aClassThatKeepsReportingIsNeverRemovedAndKeepsOneTimer() throws Exception {
        for (long t = 0; t <= 5 * RETENTION; t += RETENTION / 2) {
            h.setProcessingTime(t);
            h.processElement(window("chat", WindowKind.TUMBLING, t), t);
        }
        assertThat(h.extractOutputValues()).allMatch(w -> w.value != null);
        assertThat(h.numProcessingTimeTimers()).isEqualTo(1);
        h.setProcessingTime(6 * RETENTION + 1);
        assertThat(h.extractOutputValues()).filteredOn(w -> w.value == null).hasSize(2);
        assertThat(h.numProcessingTimeTimers()).isZero();
        assertThat(h.numKeyedStateEntries()).isZero();
    }

    private static ClassRatios window(String prefixClass, WindowKind kind, long endMs) {
        return ClassRatios.newBuilder().setPrefixClass(prefixClass).setWindowKind(kind).setWindowStartMs(endMs - 10_000)
                .setWindowEndMs(endMs).setRequests(10).setAffinityHits(5).setAffinityHitRate(0.5).setAvoidedTokensPerHit(100)
                .setAvoidedUsdPerHit(0).setLoadGini(0.1).setAffinityRouted(5).setStale(0).setStalenessRatio(0).setCostKnown(0)
                .setSavedPrefillMsPerRequest(0).setAddedWaitMsPerRequest(0).build();
    }
}
