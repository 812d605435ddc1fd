package dev.kvrouter.jobs.ratios;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.events.OutcomeStatus;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RouteReason;
import dev.kvrouter.events.RoutingDecision;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class DecisionOutcomeJoinTest {

    private KeyedTwoInputStreamOperatorTestHarness<String, RoutingDecision, RequestOutcome, JoinedRequest> h;

    @BeforeEach
    void open() throws Exception {
        h = ProcessFunctionTestHarnesses.forKeyedCoProcessFunction(new DecisionOutcomeJoin(60_000),
                RoutingDecision::getRequestId, RequestOutcome::getRequestId, Types.STRING);
        h.setProcessingTime(0);
    }

    @AfterEach
    void close() throws Exception {
        h.close();
    }

    @Test
    void eitherOrderJoinsAndLeavesNoStateOrTimer() throws Exception {
        h.processElement1(decision("r1"), 0);
        h.processElement2(outcome("r1"), 0);
        h.processElement2(outcome("r2"), 0);
        h.processElement1(decision("r2"), 0);
        List<JoinedRequest> joined = h.extractOutputValues();
        assertThat(joined).extracting(j -> j.requestId).containsExactly("r1", "r2");
        JoinedRequest j = joined.get(0);
        assertThat(j.predictedCachedBlocks).isEqualTo(4);
        assertThat(j.cachedTokens).isEqualTo(48);
        assertThat(j.rootBlock).isEqualTo(11L);
        assertThat(j.reason).isEqualTo(RouteReason.AFFINITY);
        assertThat(j.completed).isTrue();
        assertThat(h.numKeyedStateEntries()).isZero();
        assertThat(h.numProcessingTimeTimers()).isZero();
    }

    @Test
    void aLoneSideLeavesUnmatchedAfterTheBound() throws Exception {
        h.processElement1(decision("lost-outcome"), 0);
        h.setProcessingTime(30_000);
        h.processElement2(outcome("no-decision"), 30_000);
        h.setProcessingTime(59_999);
        assertThat(h.getSideOutput(DecisionOutcomeJoin.UNMATCHED_DECISIONS)).isNullOrEmpty();
        h.setProcessingTime(60_000);
        assertThat(h.getSideOutput(DecisionOutcomeJoin.UNMATCHED_DECISIONS)).extracting(r -> ((StreamRecord<RoutingDecision>) r)
                .getValue().getRequestId()).containsExactly("lost-outcome");
        h.setProcessingTime(90_000);
        assertThat(h.getSideOutput(DecisionOutcomeJoin.UNMATCHED_OUTCOMES)).extracting(r -> ((StreamRecord<RequestOutcome>) r)
                .getValue().getRequestId()).containsExactly("no-decision");
        assertThat(h.extractOutputValues()).isEmpty();
        assertThat(h.numKeyedStateEntries()).isZero();
        assertThat(h.numProcessingTimeTimers()).isZero();
    }

    private static RoutingDecision decision(String id) {
        return RoutingDecision.newBuilder().setRequestId(id).setEngineId("e1").setPredictedCachedBlocks(4)
                .setReason(RouteReason.AFFINITY).setTsMs(0).setPromptBlockHashes(List.of(11L, 12L)).build();
    }

    private static RequestOutcome outcome(String id) {
        return RequestOutcome.newBuilder().setRequestId(id).setEngineId("e1").setPromptTokens(100).setCachedTokens(48)
                .setQueueMs(1).setTtftMs(50).setStatus(OutcomeStatus.OK).setTsMs(10).build();
    }
}
