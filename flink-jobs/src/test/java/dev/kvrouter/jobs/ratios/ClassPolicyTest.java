package dev.kvrouter.jobs.ratios;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.jobs.alerts.AlertObservation;
import dev.kvrouter.jobs.policy.AffinitySwitch;
import dev.kvrouter.metrics.ClassRatios;
import dev.kvrouter.metrics.WindowKind;
import dev.kvrouter.redis.ViewWrite;
import java.time.Duration;
import java.util.List;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.apache.flink.api.common.typeinfo.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ClassPolicyTest {

    /** Off below a 10 % hit rate, back on above 30 %, on windows of at least 10 requests. */
    private KeyedOneInputStreamOperatorTestHarness<String, ClassRatios, ViewWrite> h;

    @BeforeEach
    void open() throws Exception {
        h = ProcessFunctionTestHarnesses.forKeyedProcessFunction(new ClassPolicy(new AffinitySwitch(0.1, 0.3, 10)),
                ClassRatios::getPrefixClass, Types.STRING);
        h.setStateTtlProcessingTime(0);
    }

    @AfterEach
    void close() throws Exception {
        h.close();
    }

    @Test
    void aClassOffComesBackOnWhenWhatItsBestHolderWouldMatchShowsReuse() throws Exception {
        h.processElement(window("chat", 20, 1, 0, 0), 0);
        h.processElement(window("chat", 20, 0, 4, 20), 0);
        h.processElement(window("chat", 20, 0, 10, 20), 0);
        assertThat(values()).as("5 % hits: off; 20 % would match: still off; 50 %: on").containsExactly("off", "off", "on");
        assertThat(h.getSideOutput(ClassPolicy.AFFINITY)).hasSize(3);
        assertThat(h.getSideOutput(ClassPolicy.AFFINITY).stream().map(r -> ((AlertObservation) r.getValue()).breached()).toList())
                .containsExactly(true, true, false);
        assertThat(h.numProcessingTimeTimers()).isZero();
    }

    @Test
    void slidingWindowsDecideNothing() throws Exception {
        ClassRatios sliding = ClassRatios.newBuilder(window("chat", 20, 0, 0, 0)).setWindowKind(WindowKind.SLIDING).build();
        h.processElement(sliding, 0);
        assertThat(h.extractOutputValues()).isEmpty();
        assertThat(h.numKeyedStateEntries()).isZero();
    }

    @Test
    void aClassNotSeenForADayIsForgottenAndStartsAgainWithAffinityOn() throws Exception {
        h.processElement(window("once", 20, 0, 0, 0), 0);
        assertThat(h.numKeyedStateEntries()).isEqualTo(1);
        // An empty window decides nothing by itself: the state before it stands. A day later that
        // state is gone (TTL), so the class is on again.
        h.processElement(window("once", 0, 0, 0, 0), 0);
        h.setStateTtlProcessingTime(Duration.ofDays(1).toMillis() + 1);
        h.processElement(window("once", 0, 0, 0, 0), 0);
        assertThat(values()).containsExactly("off", "off", "on");
    }

    private List<String> values() {
        return h.extractOutputValues().stream().map(w -> w.value).toList();
    }

    private static ClassRatios window(String prefixClass, long requests, long hits, long wouldMatch, long wouldMatchKnown) {
        return ClassRatios.newBuilder().setPrefixClass(prefixClass).setWindowKind(WindowKind.TUMBLING).setWindowStartMs(0)
                .setWindowEndMs(10_000).setRequests(requests).setAffinityHits(hits)
                .setAffinityHitRate(requests == 0 ? 0 : (double) hits / requests).setAvoidedTokensPerHit(0).setAvoidedUsdPerHit(0)
                .setLoadGini(0).setAffinityRouted(0).setStale(0).setStalenessRatio(0).setWouldMatch(wouldMatch)
                .setWouldMatchKnown(wouldMatchKnown).build();
    }
}
