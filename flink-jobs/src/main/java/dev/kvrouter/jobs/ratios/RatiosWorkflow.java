package dev.kvrouter.jobs.ratios;

import dev.kvrouter.alerts.Alert;
import dev.kvrouter.alerts.AlertKind;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.dlq.DeadLetter;
import dev.kvrouter.events.OutcomeStatus;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RoutingDecision;
import dev.kvrouter.jobs.alerts.AlertObservation;
import dev.kvrouter.jobs.alerts.AlertRules;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.jobs.io.DecodeFunction;
import dev.kvrouter.jobs.io.HotPrefix;
import dev.kvrouter.jobs.io.LocationUpdate;
import dev.kvrouter.jobs.io.RawRecord;
import dev.kvrouter.jobs.io.RequestSample;
import dev.kvrouter.jobs.io.ViewWriteType;
import dev.kvrouter.jobs.policy.AffinityPayoff;
import dev.kvrouter.metrics.ClassRatios;
import dev.kvrouter.metrics.WindowKind;
import dev.kvrouter.redis.ViewWrite;
import java.util.Optional;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.windowing.assigners.SlidingProcessingTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingProcessingTimeWindows;
import org.apache.flink.util.Collector;

/**
 * The per-class ratios: routing decisions joined with request outcomes by request id (bounded),
 * each request given its prefix class, then the four ratios per class on a tumbling and a longer
 * sliding window, to the ratios topic and, latest values, to Redis; and per class, whether affinity
 * paid (the prefill it saved against the wait it added), for the alert rules and the class gauges.
 *
 * <pre>
 * decisions ─ decode ─┐                                      ┌─ tumbling ─┐
 * outcomes ── decode ─┴─ join (by request) ─ class ─ by class┤            ├─ ratios topic, Redis
 *                         │└─ unmatched, counted per class ──┘─ sliding ──┘
 *                         └─ cached blocks confirmed on their engine ─ routing view's table
 * </pre>
 */
public final class RatiosWorkflow {

    /** The two input topics' raw records and how their values decode (the job: the registry's wire format). */
    public record Sources(DataStream<RawRecord> decisions, DataStream<RawRecord> outcomes, DecodeFunction.Decoder decoder) {}

    public record Sinks(Sink<ClassRatios> ratios, Sink<ViewWrite> view, Sink<DeadLetter> deadLetters, Sink<Alert> alerts) {}

    /**
     * What the routing view takes from the requests: hot prefixes, for its replica planner, and
     * confirmations (the blocks each completed request found cached on its engine), for the table;
     * and what each completed request shows of its engine's speed (prefill rate, slot time).
     */
    public record Outputs(DataStream<HotPrefix> hotPrefixes, DataStream<LocationUpdate> confirmations,
                          DataStream<RequestSample> engineSpeeds) {}

    private RatiosWorkflow() {}

    /** Builds the ratios topology; returns what the routing view takes from it. */
    public static Outputs build(KvRouterJobConfig config, Sources sources, Sinks sinks) {
        DecodeFunction.Check<RoutingDecision> decisionCheck = d -> d.getRequestId().isBlank()
                ? Optional.of("request_id is empty") : Optional.empty();
        DecodeFunction.Check<RequestOutcome> outcomeCheck = o -> o.getRequestId().isBlank()
                ? Optional.of("request_id is empty")
                : o.getCachedTokens() < 0 || o.getCachedTokens() > o.getPromptTokens()
                ? Optional.of("cached_tokens " + o.getCachedTokens() + " is outside 0.." + o.getPromptTokens())
                : Optional.empty();
        SingleOutputStreamOperator<RoutingDecision> decisions = sources.decisions()
                .process(new DecodeFunction<>(RoutingDecision.class, sources.decoder(), decisionCheck))
                .returns(TypeInformation.of(RoutingDecision.class)).name("decode decisions").uid("decode-decisions");
        SingleOutputStreamOperator<RequestOutcome> outcomes = sources.outcomes()
                .process(new DecodeFunction<>(RequestOutcome.class, sources.decoder(), outcomeCheck))
                .returns(TypeInformation.of(RequestOutcome.class)).name("decode outcomes").uid("decode-outcomes");
        decisions.getSideOutput(DecodeFunction.DEAD_LETTERS).union(outcomes.getSideOutput(DecodeFunction.DEAD_LETTERS))
                .sinkTo(sinks.deadLetters()).name("ratio dead letters").uid("sink-ratio-dead-letters");

        KeySelector<RoutingDecision, String> decisionId = RoutingDecision::getRequestId;
        KeySelector<RequestOutcome, String> outcomeId = RequestOutcome::getRequestId;
        SingleOutputStreamOperator<JoinedRequest> joined = decisions.keyBy(decisionId).connect(outcomes.keyBy(outcomeId))
                .process(new DecisionOutcomeJoin(config.ratios().joinBound().toMillis()))
                .returns(TypeInformation.of(JoinedRequest.class)).name("join decisions and outcomes").uid("join-requests");
        DataStream<JoinedRequest> unmatched = joined.getSideOutput(DecisionOutcomeJoin.UNMATCHED_DECISIONS)
                .map(RatiosWorkflow::decisionOnly).returns(TypeInformation.of(JoinedRequest.class)).name("unmatched decisions")
                .union(joined.getSideOutput(DecisionOutcomeJoin.UNMATCHED_OUTCOMES)
                        .map(RatiosWorkflow::outcomeOnly).returns(TypeInformation.of(JoinedRequest.class)).name("unmatched outcomes"));

        SingleOutputStreamOperator<JoinedRequest> classed = joined.union(unmatched)
                .process(new ClassAssigner(config.ratios().sketchCapacity(), config.ratios().hotAt(), config.ratios().warmAt(),
                        config.replicas().interval().toMillis(), config.replicas().prefixBlocks(), config.ratios().maxClasses(),
                        config.ratios().slidingWindow().toMillis()))
                .returns(TypeInformation.of(JoinedRequest.class)).setParallelism(1).name("prefix classes").uid("prefix-classes");

        KeySelector<JoinedRequest, String> byClass = r -> r.prefixClass;
        int blockTokens = config.view().chunkTokens();
        DataStream<ClassRatios> tumbling = classed.keyBy(byClass)
                .window(TumblingProcessingTimeWindows.of(config.ratios().window()))
                .aggregate(new ClassRatiosAggregate(blockTokens, config.cost().usdPerMillionInput()), new ClassWindow(WindowKind.TUMBLING),
                        TypeInformation.of(RatioAccumulator.class), TypeInformation.of(ClassRatios.class),
                        TypeInformation.of(ClassRatios.class))
                .name("ratios, tumbling").uid("ratios-tumbling");
        DataStream<ClassRatios> sliding = classed.keyBy(byClass)
                .window(SlidingProcessingTimeWindows.of(config.ratios().slidingWindow(), config.ratios().slide()))
                .aggregate(new ClassRatiosAggregate(blockTokens, config.cost().usdPerMillionInput()), new ClassWindow(WindowKind.SLIDING),
                        TypeInformation.of(RatioAccumulator.class), TypeInformation.of(ClassRatios.class),
                        TypeInformation.of(ClassRatios.class))
                .name("ratios, sliding").uid("ratios-sliding");
        DataStream<ClassRatios> ratios = tumbling.union(sliding);
        ratios.sinkTo(sinks.ratios()).name("ratios topic").uid("sink-ratios");
        KeySelector<ClassRatios, String> ratiosClass = r -> r.getPrefixClass();
        // The uid is the class policy's of older jobs: their savepoints' switch state is restored here and cleared.
        DataStream<AlertObservation> affinityPaid = tumbling.keyBy(ratiosClass)
                .process(new AffinityLedger(new AffinityPayoff(config.ratios().affinityMinRequests(), config.cost().uncachedPrefillWeight())))
                .returns(TypeInformation.of(AlertObservation.class)).name("class affinity paid").uid("class-affinity");
        KeySelector<RoutingDecision, String> decisionClient = RoutingDecision::getClientId;
        KeySelector<JoinedRequest, String> doneClient = r -> r.clientId;
        DataStream<ViewWrite> clients = decisions.filter(d -> d.getClientId() != null).name("decisions with a client")
                .keyBy(decisionClient)
                .connect(joined.union(joined.getSideOutput(DecisionOutcomeJoin.UNMATCHED_DECISIONS)
                                .map(RatiosWorkflow::decisionOnly).returns(TypeInformation.of(JoinedRequest.class)))
                        .filter(r -> r.clientId != null).name("completions with a client").keyBy(doneClient))
                .process(new ClientInflight()).returns(ViewWriteType.INFO)
                .name("clients in flight").uid("clients-in-flight");
        double stalenessAbove = config.ratios().alertStalenessAbove();
        int minRouted = config.ratios().affinityMinRequests();
        KeySelector<AlertObservation, String> alertKey = AlertObservation::key;
        tumbling.map(r -> new AlertObservation(AlertKind.STALE_VIEW, r.getPrefixClass(), r.getStalenessRatio(), stalenessAbove,
                        r.getAffinityRouted() >= minRouted && r.getStalenessRatio() > stalenessAbove,
                        "class " + r.getPrefixClass() + ": " + r.getStale() + " of " + r.getAffinityRouted()
                                + " requests routed for affinity found fewer cached blocks than the view promised",
                        r.getWindowEndMs()))
                .returns(TypeInformation.of(AlertObservation.class)).name("staleness").uid("staleness-observations")
                .union(affinityPaid)
                .keyBy(alertKey).process(new AlertRules()).returns(TypeInformation.of(Alert.class))
                .name("class alerts").uid("class-alerts")
                .sinkTo(sinks.alerts()).name("alerts topic").uid("sink-class-alerts");
        // A class's fields leave the view's ratios hash after an hour without a report (two sliding windows if longer).
        long ratiosRetentionMs = Math.max(java.time.Duration.ofHours(1).toMillis(), 2 * config.ratios().slidingWindow().toMillis());
        ratios.keyBy(ratiosClass).process(new LatestRatios(ratiosRetentionMs)).returns(ViewWriteType.INFO)
                .name("latest ratios").uid("latest-ratios")
                .union(clients)
                .sinkTo(sinks.view()).name("redis ratios").uid("sink-redis-ratios");
        int chunkTokens = config.view().chunkTokens();
        int tagDepth = config.view().tagDepth();
        DataStream<LocationUpdate> confirmations = joined
                .flatMap((JoinedRequest r, Collector<LocationUpdate> out) -> confirmations(r, chunkTokens, tagDepth, out))
                .returns(TypeInformation.of(LocationUpdate.class)).name("cached blocks confirmed").uid("confirmations");
        // Prefills from the outcomes alone (a balancer that publishes no decisions still shows them);
        // slot times need the decision's time too.
        DataStream<RequestSample> engineSpeeds = outcomes
                .flatMap((RequestOutcome o, Collector<RequestSample> out) -> prefill(o).ifPresent(out::collect))
                .returns(TypeInformation.of(RequestSample.class)).name("prefills").uid("prefills")
                .union(joined.flatMap((JoinedRequest r, Collector<RequestSample> out) -> slot(r).ifPresent(out::collect))
                        .returns(TypeInformation.of(RequestSample.class)).name("slot times").uid("slot-times"));
        return new Outputs(classed.getSideOutput(ClassAssigner.HOT_PREFIXES), confirmations, engineSpeeds);
    }

    /**
     * How long a completed request held a slot on its engine: from its start (decided, then queued)
     * to its end; none when it failed or its times do not add up.
     */
    static Optional<RequestSample> slot(JoinedRequest r) {
        double ms = r.finishedAtMs - r.decidedAtMs - r.queueMs;
        if (!r.completed || r.engineId == null || r.decidedAtMs <= 0 || !(ms > 0) || Double.isInfinite(ms)) {
            return Optional.empty();
        }
        return Optional.of(RequestSample.slot(r.engineId, ms, r.finishedAtMs));
    }

    /**
     * The prefill a completed request took: the prompt tokens its engine computed (neither cached
     * nor transferred) over its time to first token less its queue wait; none when it failed or
     * computed nothing.
     */
    static Optional<RequestSample> prefill(RequestOutcome o) {
        int computed = o.getPromptTokens() - o.getCachedTokens() - o.getTransferredTokens();
        double ms = o.getTtftMs() - o.getQueueMs();
        if (o.getStatus() != OutcomeStatus.OK || computed <= 0 || !(ms > 0) || Double.isInfinite(ms)) {
            return Optional.empty();
        }
        return Optional.of(RequestSample.prefill(o.getEngineId(), computed, ms, o.getTsMs()));
    }

    /**
     * A completed request found its first {@code cachedTokens / chunk} canonical blocks cached on its
     * engine: each is confirmed there at the request's end (when the engine last used it), in its
     * Redis group ({@link ViewLayout#tag}); the engine's epoch and the entry's life come later.
     */
    static void confirmations(JoinedRequest r, int chunkTokens, int tagDepth, Collector<LocationUpdate> out) {
        if (!r.completed || r.engineId == null || r.promptBlocks == null) {
            return;
        }
        int cached = Math.min(r.cachedTokens / chunkTokens, r.promptBlocks.length);
        for (int i = 0; i < cached; i++) {
            out.collect(LocationUpdate.confirm(r.promptBlocks[i], ViewLayout.tag(r.promptBlocks, i + 1, tagDepth), r.engineId,
                    r.finishedAtMs, 0, 0));
        }
    }

    static JoinedRequest decisionOnly(RoutingDecision d) {
        JoinedRequest j = new JoinedRequest();
        j.requestId = d.getRequestId();
        j.clientId = d.getClientId();
        j.decidedEngine = d.getEngineId();
        j.prefixClass = d.getPrefixClass();
        j.rootBlock = d.getPromptBlockHashes().isEmpty() ? 0 : d.getPromptBlockHashes().get(0);
        j.promptBlocks = DecisionOutcomeJoin.blocks(d);
        j.unmatched = JoinedRequest.DECISION_ONLY;
        return j;
    }

    static JoinedRequest outcomeOnly(RequestOutcome o) {
        JoinedRequest j = new JoinedRequest();
        j.requestId = o.getRequestId();
        j.engineId = o.getEngineId();
        j.unmatched = JoinedRequest.OUTCOME_ONLY;
        return j;
    }
}
