package dev.kvrouter.jobs.view.functions;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.events.EngineHealth;
import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.jobs.io.RequestSample;
import dev.kvrouter.jobs.view.model.EngineStatus;
import dev.kvrouter.redis.ViewWrite;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class EngineTableTest {

    private static final double CONFIGURED = 10_000;

    private KeyedTwoInputStreamOperatorTestHarness<String, EngineStatus, RequestSample, ViewWrite> harness;

    @BeforeEach
    void open() throws Exception {
        harness = ProcessFunctionTestHarnesses.forKeyedCoProcessFunction(new EngineTable(CONFIGURED),
                s -> s.engine, p -> p.engine, Types.STRING);
    }

    @AfterEach
    void close() throws Exception {
        harness.close();
    }

    @Test
    void anEngineIsAtTheConfiguredRateUntilItsRequestsShowItsOwn() throws Exception {
        harness.processElement1(status("READY", 1_000), 1_000);
        assertThat(lastEntry().prefillTokensPerS()).as("no request yet: unknown").isZero();
        assertThat(lastEntry()).extracting(EngineEntry::status, EngineEntry::waiting, EngineEntry::slots)
                .containsExactly("READY", 2, 8);

        // A quarter of the configured rate, over ten requests of 2.5 s of prefill each: the prior
        // (250 ms at 10 000 tokens/s) hardly moves it.
        for (int i = 0; i < 10; i++) {
            harness.processElement2(RequestSample.prefill("e1", 6_250, 2_500, 1_000 + i * 100), 1_000 + i * 100);
        }
        harness.processElement1(status("READY", 2_000), 2_000);
        assertThat(lastEntry().prefillTokensPerS()).isBetween(2_500, 2_700);
    }

    @Test
    void chunksOfAPrefillInProgressShowASlowEngineBeforeAnyOutcomeButAnIdleGapIsNoChunk() throws Exception {
        harness.processElement1(status("READY", 1_000), 1_000);
        // A slowdown to a quarter: 2 048-token chunks 820 ms apart where the configured rate gives 205 ms.
        for (int i = 1; i <= 5; i++) {
            harness.processElement2(RequestSample.pace("e1", 2_048, 820, 1_000 + i * 820), 1_000 + i * 820);
        }
        harness.processElement1(status("READY", 5_200), 5_200);
        assertThat(lastEntry().prefillTokensPerS()).as("4.1 s of slow chunks against the 250 ms prior").isBetween(2_500, 3_200);

        // A conversation's next turn extending the prompt an idle engine stored last: 2 048 tokens 20 s after
        // them is no chunk (more than 8 x the 205 ms the configured rate gives it) and leaves the rate as it was.
        int before = lastEntry().prefillTokensPerS();
        harness.processElement2(RequestSample.pace("e1", 2_048, 20_000, 5_200), 5_200);
        harness.processElement1(status("READY", 5_200), 5_200);
        assertThat(lastEntry().prefillTokensPerS()).isEqualTo(before);
        // An outcome is never bounded: a request's prefill took what it took.
        harness.processElement2(RequestSample.prefill("e1", 2_048, 20_000, 5_200), 5_200);
        harness.processElement1(status("READY", 5_200), 5_200);
        assertThat(lastEntry().prefillTokensPerS()).isLessThan(before);
    }

    @Test
    void aSampleNoEngineCouldShowMovesNothingASlowOrFastButRealOneCounts() throws Exception {
        harness.processElement1(status("READY", 1_000), 1_000);
        // A buggy or hostile balancer's outcomes: a billion tokens computed in a millisecond, and ten tokens in an hour.
        harness.processElement2(RequestSample.prefill("e1", 1e9, 1, 1_000), 1_000);
        harness.processElement2(RequestSample.prefill("e1", 10, 3_600_000, 1_000), 1_000);
        harness.processElement2(RequestSample.slot("e1", 1e12, 1_000), 1_000);
        harness.processElement1(status("READY", 1_100), 1_100);
        assertThat(lastEntry().prefillTokensPerS()).as("nothing measured: unknown, the configured rate").isZero();
        assertThat(lastEntry().slotMs()).as("no slot time learned from an absurd one").isZero();

        // An engine at 1/32 of the configured rate is still seen as it is.
        harness.processElement2(RequestSample.prefill("e1", 3_125, 10_000, 1_200), 1_200);
        harness.processElement1(status("READY", 1_300), 1_300);
        assertThat(lastEntry().prefillTokensPerS()).isBetween(300, 700);
    }

    @Test
    void anEngineThatGetsNoMoreRequestsDriftsBackToTheConfiguredRate() throws Exception {
        harness.processElement1(status("READY", 1_000), 1_000);
        harness.processElement2(RequestSample.prefill("e1", 2_500, 1_000, 1_000), 1_000);
        harness.processElement1(status("READY", 1_000), 1_000);
        int slow = lastEntry().prefillTokensPerS();
        harness.processElement1(status("READY", 31_000), 31_000);
        int later = lastEntry().prefillTokensPerS();
        harness.processElement1(status("READY", 91_000), 91_000);
        int muchLater = lastEntry().prefillTokensPerS();
        assertThat(slow).as("2 500 tokens/s against the prior").isLessThanOrEqualTo(4_000);
        assertThat(later).isGreaterThan(slow).isLessThan(muchLater);
        assertThat(muchLater).isGreaterThan(9_900).isLessThanOrEqualTo(10_000);
    }

    @Test
    void theSlotTimeIsTheMeanTimeRecentRequestsHeldASlot() throws Exception {
        harness.processElement1(status("READY", 1_000), 1_000);
        assertThat(lastEntry().slotMs()).as("no request yet: unknown").isZero();
        harness.processElement2(RequestSample.slot("e1", 4_000, 1_000), 1_000);
        harness.processElement2(RequestSample.slot("e1", 2_000, 1_000), 1_000);
        harness.processElement2(RequestSample.prefill("e1", 1_000, 100, 1_000), 1_000);
        harness.processElement1(status("READY", 1_500), 1_500);
        assertThat(lastEntry().slotMs()).as("a prefill alone is no slot time").isEqualTo(3_000);
        // A minute later a request of 1 s: the old ones weigh e^-6 of it.
        harness.processElement2(RequestSample.slot("e1", 1_000, 61_000), 61_000);
        harness.processElement1(status("READY", 61_000), 61_000);
        assertThat(lastEntry().slotMs()).isBetween(1_000, 1_010);
    }

    @Test
    void aDeadEngineLeavesTheTableAndItsStateGoesAndSamplesOfAnUnknownEngineKeepNothing() throws Exception {
        harness.processElement2(RequestSample.prefill("e1", 1_000, 100, 500), 500);
        assertThat(harness.numKeyedStateEntries()).as("not known to the tracker yet").isZero();

        harness.processElement1(status("READY", 1_000), 1_000);
        harness.processElement2(RequestSample.prefill("e1", 1_000, 100, 1_100), 1_100);
        assertThat(harness.numKeyedStateEntries()).isEqualTo(1);

        harness.processElement1(status("DEAD", 5_000), 5_000);
        List<ViewWrite> out = harness.extractOutputValues();
        assertThat(out.get(out.size() - 1).value).as("the engine's field is deleted").isNull();
        assertThat(harness.numKeyedStateEntries()).isZero();
        assertThat(harness.numEventTimeTimers() + harness.numProcessingTimeTimers()).isZero();
    }

    private EngineEntry lastEntry() {
        List<ViewWrite> out = harness.extractOutputValues();
        return EngineEntry.decode(out.get(out.size() - 1).value);
    }

    private static EngineStatus status(String health, long tsMs) {
        EngineStatus s = new EngineStatus();
        s.engine = "e1";
        s.currentHealth = EngineHealth.valueOf(health);
        s.waiting = 2;
        s.running = 8;
        s.slots = 8;
        s.kvUsage = 0.5;
        s.residencyMs = 60_000;
        s.epoch = 1;
        s.tsMs = tsMs;
        s.loadAtMs = tsMs;
        return s;
    }
}
