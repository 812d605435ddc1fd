package dev.kvrouter.jobs.ratios;

import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RouteReason;
import dev.kvrouter.events.RoutingDecision;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Joins each routing decision with its request's outcome, keyed by request id, within a bound:
 * whichever arrives first waits at most {@code boundMs} (processing time) for the other. A
 * decision whose outcome never comes, or an outcome with no decision, is not dropped silently: it
 * leaves on a side output, to be counted per class.
 */
public final class DecisionOutcomeJoin extends KeyedCoProcessFunction<String, RoutingDecision, RequestOutcome, JoinedRequest> {

    public static final OutputTag<RoutingDecision> UNMATCHED_DECISIONS = new OutputTag<>("unmatched-decisions") {};
    public static final OutputTag<RequestOutcome> UNMATCHED_OUTCOMES = new OutputTag<>("unmatched-outcomes") {};

    private final long boundMs;
    private transient ValueState<RoutingDecision> decision;
    private transient ValueState<RequestOutcome> outcome;
    private transient ValueState<Long> deadline;
    private transient Counter duplicates;
    /** Routing decisions by the reason kvr_pick gave, {@code kvr_decisions_total{reason}}: the whole fleet's balancers. */
    private transient java.util.EnumMap<RouteReason, Counter> decisions;

    public DecisionOutcomeJoin(long boundMs) {
        if (boundMs < 1) {
            throw new IllegalArgumentException("the join bound must be positive");
        }
        this.boundMs = boundMs;
    }

    @Override
    public void open(OpenContext openContext) {
        decision = getRuntimeContext().getState(new ValueStateDescriptor<>("decision", TypeInformation.of(RoutingDecision.class)));
        outcome = getRuntimeContext().getState(new ValueStateDescriptor<>("outcome", TypeInformation.of(RequestOutcome.class)));
        deadline = getRuntimeContext().getState(new ValueStateDescriptor<>("deadline", Types.LONG));
        duplicates = getRuntimeContext().getMetricGroup().counter("kvr_duplicate_decisions_or_outcomes_total");
        decisions = new java.util.EnumMap<>(RouteReason.class);
        for (RouteReason reason : RouteReason.values()) {
            decisions.put(reason, getRuntimeContext().getMetricGroup().addGroup("reason", reason.name()).counter("kvr_decisions_total"));
        }
    }

    @Override
    public void processElement1(RoutingDecision d, Context ctx, Collector<JoinedRequest> out) throws Exception {
        if (d.getReason() != null) {
            decisions.get(d.getReason()).inc();
        }
        RequestOutcome o = outcome.value();
        if (o != null) {
            out.collect(join(d, o));
            clear(ctx);
            return;
        }
        if (decision.value() != null) {
            duplicates.inc();
        }
        decision.update(d);
        arm(ctx);
    }

    @Override
    public void processElement2(RequestOutcome o, Context ctx, Collector<JoinedRequest> out) throws Exception {
        RoutingDecision d = decision.value();
        if (d != null) {
            out.collect(join(d, o));
            clear(ctx);
            return;
        }
        if (outcome.value() != null) {
            duplicates.inc();
        }
        outcome.update(o);
        arm(ctx);
    }

    // Timer path: the bound passed with one side alone; it leaves unmatched and the key keeps nothing.
    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<JoinedRequest> out) throws Exception {
        RoutingDecision d = decision.value();
        RequestOutcome o = outcome.value();
        if (d != null) {
            ctx.output(UNMATCHED_DECISIONS, d);
        }
        if (o != null) {
            ctx.output(UNMATCHED_OUTCOMES, o);
        }
        decision.clear();
        outcome.clear();
        deadline.clear();
    }

    private void arm(Context ctx) throws Exception {
        if (deadline.value() == null) {
            long at = ctx.timerService().currentProcessingTime() + boundMs;
            ctx.timerService().registerProcessingTimeTimer(at);
            deadline.update(at);
        }
    }

    /** State clearing: the request is complete, nothing of it stays. */
    private void clear(Context ctx) throws Exception {
        Long at = deadline.value();
        if (at != null) {
            ctx.timerService().deleteProcessingTimeTimer(at);
        }
        decision.clear();
        outcome.clear();
        deadline.clear();
    }

    static long[] blocks(RoutingDecision d) {
        return d.getPromptBlockHashes().stream().mapToLong(Long::longValue).toArray();
    }

    static JoinedRequest join(RoutingDecision d, RequestOutcome o) {
        JoinedRequest j = new JoinedRequest();
        j.requestId = d.getRequestId();
        j.prefixClass = d.getPrefixClass();
        j.clientId = d.getClientId();
        j.engineId = o.getEngineId();
        j.decidedEngine = d.getEngineId();
        j.reason = d.getReason();
        j.predictedCachedBlocks = d.getPredictedCachedBlocks();
        j.bestHolderBlocks = d.getBestHolderBlocks();
        j.savedPrefillMs = d.getSavedPrefillMs();
        j.addedWaitMs = d.getAddedWaitMs();
        j.rootBlock = d.getPromptBlockHashes().isEmpty() ? 0 : d.getPromptBlockHashes().get(0);
        j.promptBlocks = blocks(d);
        j.promptTokens = o.getPromptTokens();
        j.cachedTokens = o.getCachedTokens();
        j.completed = o.getStatus() == dev.kvrouter.events.OutcomeStatus.OK;
        j.transferredTokens = o.getTransferredTokens();
        j.queueMs = o.getQueueMs();
        j.ttftMs = o.getTtftMs();
        j.decidedAtMs = d.getTsMs();
        j.finishedAtMs = o.getTsMs();
        return j;
    }
}
