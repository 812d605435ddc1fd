package dev.kvrouter.jobs.ratios;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.jobs.config.KvRouterJobOptions;
import dev.kvrouter.jobs.io.HotPrefix;
import java.util.List;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ClassAssignerTest {

    private OneInputStreamOperatorTestHarness<JoinedRequest, JoinedRequest> harness;

    @BeforeEach
    void open() throws Exception {
        // hot at 3, warm at 2; a hot prefix leaves at most every 1000 ms with at most 4 blocks
        harness = ProcessFunctionTestHarnesses.forProcessFunction(new ClassAssigner(100, 3, 2, 1_000, 4, 2, 60_000));
        harness.setProcessingTime(0);
    }

    @AfterEach
    void close() throws Exception {
        harness.close();
    }

    private void request(String id, String label, long... blocks) throws Exception {
        JoinedRequest r = new JoinedRequest();
        r.requestId = id;
        r.prefixClass = label;
        r.rootBlock = blocks[0];
        r.promptBlocks = blocks;
        harness.processElement(r, 0);
    }

    private List<HotPrefix> hot() {
        return harness.getSideOutput(ClassAssigner.HOT_PREFIXES) == null ? List.of()
                : harness.getSideOutput(ClassAssigner.HOT_PREFIXES).stream().map(StreamRecord::getValue).toList();
    }

    @Test
    void unlabeledRequestsAreClassedByPopularityAndLabeledOnesCountToo() throws Exception {
        request("r1", null, 7, 1);
        request("r2", "app", 7, 2);
        request("r3", null, 7, 3);
        request("r4", null, 9, 1);
        assertThat(harness.extractOutputValues()).extracting(r -> r.prefixClass)
                .containsExactly("one-shot", "app", "hot", "one-shot");
        assertThat(harness.extractOutputValues()).allMatch(r -> r.promptBlocks == null);
    }

    @Test
    void aBalancerSendingMoreLabelsThanTheCapGetsThemCountedUnderOtherNotOneWindowEach() throws Exception {
        request("r1", "chat", 7, 1);
        request("r2", "rag", 8, 1);
        for (int i = 0; i < 100; i++) {
            request("x" + i, "tenant-" + i, 9, 1); // a buggy or hostile balancer: a new label per request
        }
        request("r3", "chat", 7, 2);
        request("r4", null, 6, 1);
        assertThat(harness.extractOutputValues()).extracting(r -> r.prefixClass).doesNotContain("tenant-0")
                .filteredOn(ClassLabels.OTHER::equals).hasSize(100);
        assertThat(harness.extractOutputValues().subList(102, 104)).extracting(r -> r.prefixClass).containsExactly("chat", "one-shot");
    }

    @Test
    void aConversationsSecondTurnIsReuseNotOneShot() throws Exception {
        // The job's default warm-at (2): a prefix seen before is warm. Turn 2 carries turn 1 as its prefix.
        try (OneInputStreamOperatorTestHarness<JoinedRequest, JoinedRequest> defaults = ProcessFunctionTestHarnesses.forProcessFunction(
                new ClassAssigner(100, 50, dev.kvrouter.jobs.config.KvRouterJobOptions.RATIOS_WARM_AT.defaultValue(), 1_000, 4, 2, 60_000))) {
            for (long[] turn : new long[][] {{11, 12}, {11, 12, 13, 14}, {21, 22}}) {
                JoinedRequest r = new JoinedRequest();
                r.requestId = "t" + turn.length;
                r.rootBlock = turn[0];
                r.promptBlocks = turn;
                defaults.processElement(r, 0);
            }
            assertThat(defaults.extractOutputValues()).extracting(r -> r.prefixClass)
                    .as("first turn, second turn of the same conversation, another conversation's first")
                    .containsExactly("one-shot", "warm", "one-shot");
        }
    }

    @Test
    void theRequestItReadsIsLeftAsItWas() throws Exception {
        // The job reuses objects between chained operators: the confirmations read the same request.
        JoinedRequest r = new JoinedRequest();
        r.requestId = "r1";
        r.rootBlock = 7;
        r.promptBlocks = new long[] {7, 1};
        harness.processElement(r, 0);
        assertThat(r.prefixClass).isNull();
        assertThat(r.promptBlocks).containsExactly(7, 1);
        assertThat(harness.extractOutputValues().get(0)).extracting(o -> o.prefixClass, o -> o.promptBlocks, o -> o.requestId)
                .containsExactly("one-shot", null, "r1");
    }

    @Test
    void aHotPrefixLeavesOncePerIntervalWithTheBlocksItsRequestsShare() throws Exception {
        request("r1", null, 7, 1, 2, 3, 4, 5, 6);
        request("r2", null, 7, 1, 2, 3, 4, 5, 6);
        assertThat(hot()).as("not hot yet (2 < 3)").isEmpty();
        request("r3", null, 7, 1, 2, 3, 4, 5, 6);
        assertThat(hot()).as("hot, but one request since: not a prefix yet").isEmpty();
        request("r4", "app", 7, 1, 2, 9);
        assertThat(hot()).hasSize(1);
        HotPrefix p = hot().get(0);
        assertThat(p.rootBlock).isEqualTo(7);
        assertThat(p.prefixBlocks).as("r3 capped at 4 blocks, r4 shares 3").containsExactly(7, 1, 2);
        assertThat(p.requests).isEqualTo(4);
        assertThat(p.exemplarRequestId).isEqualTo("r4");
        assertThat(p.prefixClass).isEqualTo("app");

        request("r5", null, 7, 1, 5);
        assertThat(hot()).as("within the interval").hasSize(1);
        harness.setProcessingTime(1_000);
        request("r6", null, 7, 1, 2);
        assertThat(hot()).hasSize(2);
        assertThat(hot().get(1).prefixBlocks).containsExactly(7, 1);
    }
}
