package dev.kvrouter.jobs.ratios;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.events.RouteReason;
import dev.kvrouter.events.RoutingDecision;
import dev.kvrouter.redis.ViewWrite;
import java.time.Duration;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ClientInflightTest {

    private KeyedTwoInputStreamOperatorTestHarness<String, RoutingDecision, JoinedRequest, ViewWrite> h;

    @BeforeEach
    void open() throws Exception {
        h = ProcessFunctionTestHarnesses.forKeyedCoProcessFunction(new ClientInflight(), RoutingDecision::getClientId,
                r -> r.clientId, Types.STRING);
        h.setProcessingTime(0);
        h.setStateTtlProcessingTime(0);
    }

    @AfterEach
    void close() throws Exception {
        h.close();
    }

    @Test
    void eachDecisionCountsOnItsEngineUntilItsRequestIsDoneAndThenNothingIsLeft() throws Exception {
        h.processElement1(decision("c1", "e1"), 0);
        h.processElement1(decision("c1", "e2"), 0);
        h.processElement1(decision("c1", "e1"), 0);
        h.processElement2(done("c1", "e1"), 0);
        h.processElement2(done("c1", "e2"), 0);
        h.processElement2(done("c1", "e1"), 0);
        assertThat(values()).containsExactly("e1=1", "e1=1,e2=1", "e1=2,e2=1", "e1=1,e2=1", "e1=1", null);
        assertThat(h.extractOutputValues()).allSatisfy(w -> assertThat(w.field).isEqualTo("c1"));
        // State clearing: an engine with nothing in flight leaves the map, a client with none leaves the state.
        assertThat(h.numKeyedStateEntries()).isZero();
        assertThat(h.numProcessingTimeTimers()).isZero();
    }

    @Test
    void aCompletionThatOvertakesItsDecisionIsNotLostAndAnUnmatchedOneCountsNothing() throws Exception {
        h.processElement2(done("c1", "e1"), 0);
        h.processElement1(decision("c1", "e1"), 0);
        JoinedRequest outcomeOnly = done("c1", null);
        h.processElement2(outcomeOnly, 0);
        assertThat(values()).as("-1 kept (not published), then back to none").containsExactly(null, null);
        assertThat(h.numKeyedStateEntries()).isZero();
    }

    @Test
    void aRequestWhoseCompletionIsLostForGoodStopsCountingAfterAnHour() throws Exception {
        h.processElement1(decision("c1", "e1"), 0);
        h.setStateTtlProcessingTime(Duration.ofHours(1).toMillis() + 1);
        h.processElement1(decision("c1", "e2"), 0);
        assertThat(values()).containsExactly("e1=1", "e2=1");
    }

    private List<String> values() {
        return h.extractOutputValues().stream().map(w -> w.value).toList();
    }

    private static RoutingDecision decision(String client, String engine) {
        return RoutingDecision.newBuilder().setRequestId("r").setClientId(client).setEngineId(engine).setPredictedCachedBlocks(0)
                .setReason(RouteReason.COLD).setTsMs(0).build();
    }

    private static JoinedRequest done(String client, String decidedEngine) {
        JoinedRequest r = new JoinedRequest();
        r.clientId = client;
        r.decidedEngine = decidedEngine;
        return r;
    }
}
