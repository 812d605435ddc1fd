package dev.kvrouter.jobs.ratios;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.events.OutcomeStatus;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.jobs.io.LocationUpdate;
import dev.kvrouter.jobs.io.RequestSample;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.functions.util.ListCollector;
import org.junit.jupiter.api.Test;

class RatiosWorkflowTest {

    @Test
    void aCompletedRequestConfirmsTheWholeBlocksItFoundCachedOnTheEngineThatRanIt() {
        JoinedRequest r = request(true, 40);
        List<LocationUpdate> out = confirmations(r);
        // 40 cached tokens at 16 a block: the first two blocks, on the outcome's engine, at the request's end,
        // each in its Redis group (tag depth 2: the first block's own, then the second's).
        assertThat(out).extracting(u -> u.blockHash).containsExactly(11L, 12L);
        assertThat(out).extracting(u -> u.tag).containsExactly(11L, 12L);
        assertThat(out).allSatisfy(u -> {
            assertThat(u.confirmed).isTrue();
            assertThat(u.stored).isFalse();
            assertThat(u.engine).isEqualTo("e2");
            assertThat(u.storedAtMs).isEqualTo(5_000);
        });
    }

    @Test
    void aFailedRequestOrOneWithNothingCachedConfirmsNothing() {
        assertThat(confirmations(request(false, 64))).isEmpty();
        assertThat(confirmations(request(true, 15))).isEmpty();
        JoinedRequest noDecision = RatiosWorkflow.outcomeOnly(dev.kvrouter.events.RequestOutcome.newBuilder()
                .setRequestId("r").setEngineId("e1").setPromptTokens(64).setCachedTokens(64).setTransferredTokens(0)
                .setQueueMs(0).setTtftMs(1).setOutputTokens(1).setStatus(dev.kvrouter.events.OutcomeStatus.OK).setTsMs(1).build());
        assertThat(confirmations(noDecision)).as("an outcome alone names no blocks").isEmpty();
    }

    @Test
    void aCompletedRequestsPrefillIsTheTokensItsEngineComputedOverItsTimeToFirstTokenLessItsQueueWait() {
        dev.kvrouter.jobs.io.RequestSample p = RatiosWorkflow.prefill(outcome(1_000, 200, 100, 30, 530, OutcomeStatus.OK))
                .orElseThrow();
        assertThat(p.engine).isEqualTo("e1");
        assertThat(p.prefillTokens).as("1000 prompt tokens, 200 cached, 100 transferred").isEqualTo(700);
        assertThat(p.prefillMs).isEqualTo(500);
        assertThat(p.atMs).isEqualTo(9_000);
    }

    @Test
    void aFailedRequestOrOneThatComputedNothingIsNoPrefill() {
        assertThat(RatiosWorkflow.prefill(outcome(1_000, 0, 0, 30, 530, OutcomeStatus.ERROR))).isEmpty();
        assertThat(RatiosWorkflow.prefill(outcome(1_000, 1_000, 0, 30, 40, OutcomeStatus.OK))).as("all cached").isEmpty();
        assertThat(RatiosWorkflow.prefill(outcome(1_000, 0, 0, 30, 30, OutcomeStatus.OK))).as("no time taken").isEmpty();
    }

    @Test
    void aJoinedRequestHeldASlotFromItsStartToItsEnd() {
        JoinedRequest r = request(true, 0);
        r.decidedAtMs = 1_000;
        r.queueMs = 500;
        r.finishedAtMs = 5_000;
        dev.kvrouter.jobs.io.RequestSample s = RatiosWorkflow.slot(r).orElseThrow();
        assertThat(s.engine).isEqualTo("e2");
        assertThat(s.slotMs).isEqualTo(3_500);
        assertThat(s.prefillMs).isZero();
        r.completed = false;
        assertThat(RatiosWorkflow.slot(r)).as("a failed request").isEmpty();
    }

    private static RequestOutcome outcome(int prompt, int cached, int transferred, double queueMs, double ttftMs, OutcomeStatus status) {
        return RequestOutcome.newBuilder().setRequestId("r").setEngineId("e1").setPromptTokens(prompt).setCachedTokens(cached)
                .setTransferredTokens(transferred).setQueueMs(queueMs).setTtftMs(ttftMs).setOutputTokens(1).setStatus(status)
                .setTsMs(9_000).build();
    }

    @Test
    void cachedTokensBeyondThePromptsBlocksConfirmOnlyThoseBlocks() {
        assertThat(confirmations(request(true, 1_000))).extracting(u -> u.tag).containsExactly(11L, 12L, 12L);
    }

    private static List<LocationUpdate> confirmations(JoinedRequest r) {
        List<LocationUpdate> out = new ArrayList<>();
        RatiosWorkflow.confirmations(r, 16, 2, new ListCollector<>(out));
        return out;
    }

    private static JoinedRequest request(boolean completed, int cachedTokens) {
        JoinedRequest r = new JoinedRequest();
        r.requestId = "r";
        r.decidedEngine = "e1";
        r.engineId = "e2";
        r.promptBlocks = new long[] {11, 12, 13};
        r.cachedTokens = cachedTokens;
        r.completed = completed;
        r.finishedAtMs = 5_000;
        return r;
    }
}
