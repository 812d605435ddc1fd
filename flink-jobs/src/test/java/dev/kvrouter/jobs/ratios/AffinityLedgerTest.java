package dev.kvrouter.jobs.ratios;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.alerts.AlertKind;
import dev.kvrouter.jobs.alerts.AlertObservation;
import dev.kvrouter.jobs.policy.AffinityPayoff;
import dev.kvrouter.metrics.ClassRatios;
import dev.kvrouter.metrics.WindowKind;
import java.time.Duration;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;

class AffinityLedgerTest {

    /** Windows of at least 10 requests with a cost view are judged; prefill weighed 3 to 1 against wait, as the pick does. */
    private KeyedOneInputStreamOperatorTestHarness<String, ClassRatios, AlertObservation> h;

    @BeforeEach
    void open() throws Exception {
        h = ProcessFunctionTestHarnesses.forKeyedProcessFunction(new AffinityLedger(new AffinityPayoff(10, 3)), ClassRatios::getPrefixClass,
                Types.STRING);
    }

    @AfterEach
    void close() throws Exception {
        h.close();
    }

    @Test
    void aClassWhoseFewHitsSaveSecondsPaysAndOneWhosePlacementsQueueForNothingDoesNot() throws Exception {
        // long-prefix: 3 of 60 requests hit (5 %), each saving ~3 s of prefill; the placements added 40 ms of wait on average.
        h.processElement(window("long-prefix", 60, 3, 60, 150, 40), 0);
        // stale: placed on holders that had evicted the prompt: nothing saved, 300 ms of wait added.
        h.processElement(window("stale", 60, 0, 60, 0, 300), 0);
        // one-shot: nothing to match, placed by wait alone: nothing saved, nothing added.
        h.processElement(window("one-shot", 60, 0, 60, 0, 0), 0);
        assertThat(h.extractOutputValues()).extracting(AlertObservation::subject, AlertObservation::breached)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("long-prefix", false), org.assertj.core.groups.Tuple.tuple("stale", true),
                        org.assertj.core.groups.Tuple.tuple("one-shot", false));
        AlertObservation stale = h.extractOutputValues().get(1);
        assertThat(stale.kind()).isEqualTo(AlertKind.AFFINITY_NOT_PAYING);
        assertThat(stale.value()).isEqualTo(300.0);
        assertThat(stale.threshold()).isZero();
        assertThat(stale.message()).contains("300 ms of wait", "0 ms of prefill", "x 3", "60 requests", "did not pay");
        assertThat(h.extractOutputValues().get(0).threshold()).as("long-prefix: 150 ms saved, weighed x 3").isEqualTo(450.0);
        assertThat(h.numProcessingTimeTimers()).isZero();
        assertThat(h.numKeyedStateEntries()).as("it keeps nothing").isZero();
    }

    @Test
    void windowsTooSmallOrWithoutACostViewJudgeNothing() throws Exception {
        // Balancers that publish no cost view (or no decisions at all): nothing to judge, nothing said.
        h.processElement(window("chat", 60, 30, 0, 0, 0), 0);
        h.processElement(window("chat", 9, 0, 9, 0, 900), 0);
        ClassRatios sliding = ClassRatios.newBuilder(window("chat", 60, 0, 60, 0, 900)).setWindowKind(WindowKind.SLIDING).build();
        h.processElement(sliding, 0);
        assertThat(h.extractOutputValues()).isEmpty();
    }

    /** What older jobs ran under this operator's uid: a switch per class, kept in state. */
    private static final class OlderClassPolicy extends KeyedProcessFunction<String, ClassRatios, AlertObservation> {
        private transient ValueState<Boolean> on;

        @Override
        public void open(OpenContext openContext) {
            ValueStateDescriptor<Boolean> d = new ValueStateDescriptor<>("affinity-on", Types.BOOLEAN);
            d.enableTimeToLive(StateTtlConfig.newBuilder(Duration.ofDays(1)).build());
            on = getRuntimeContext().getState(d);
        }

        @Override
        public void processElement(ClassRatios r, Context ctx, Collector<AlertObservation> out) throws Exception {
            on.update(false);
        }
    }

    @Test
    void theSwitchAnOlderJobKeptIsRestoredThenClearedOnTheClassesNextWindow() throws Exception {
        OperatorSubtaskState older;
        try (var before = ProcessFunctionTestHarnesses.forKeyedProcessFunction(new OlderClassPolicy(), ClassRatios::getPrefixClass,
                Types.STRING)) {
            before.processElement(window("chat", 60, 0, 0, 0, 0), 0);
            before.processElement(window("batch", 60, 0, 0, 0, 0), 0);
            older = before.snapshot(1, 1);
        }
        h.close();
        h = new KeyedOneInputStreamOperatorTestHarness<>(new KeyedProcessOperator<>(new AffinityLedger(new AffinityPayoff(10, 3))),
                ClassRatios::getPrefixClass, Types.STRING);
        h.setup();
        h.initializeState(older);
        h.open();
        assertThat(h.numKeyedStateEntries()).as("restored").isEqualTo(2);
        h.processElement(window("chat", 60, 30, 60, 100, 10), 0);
        h.processElement(window("batch", 60, 30, 60, 100, 10), 0);
        assertThat(h.numKeyedStateEntries()).isZero();
    }

    private static ClassRatios window(String prefixClass, long requests, long hits, long costKnown, double savedPerRequest,
                                      double addedWaitPerRequest) {
        return ClassRatios.newBuilder().setPrefixClass(prefixClass).setWindowKind(WindowKind.TUMBLING).setWindowStartMs(0)
                .setWindowEndMs(10_000).setRequests(requests).setAffinityHits(hits)
                .setAffinityHitRate(requests == 0 ? 0 : (double) hits / requests).setAvoidedTokensPerHit(0).setAvoidedUsdPerHit(0)
                .setLoadGini(0).setAffinityRouted(0).setStale(0).setStalenessRatio(0).setCostKnown(costKnown)
                .setSavedPrefillMsPerRequest(savedPerRequest).setAddedWaitMsPerRequest(addedWaitPerRequest).build();
    }
}
