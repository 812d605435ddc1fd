package dev.kvrouter.jobs.view;

import dev.kvrouter.alerts.Alert;
import dev.kvrouter.dlq.DeadLetter;
import dev.kvrouter.events.EngineHealth;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.EngineStateChange;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.jobs.alerts.AlertObservation;
import dev.kvrouter.jobs.alerts.AlertRules;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.jobs.io.DecodeFunction;
import dev.kvrouter.jobs.io.HotPrefix;
import dev.kvrouter.jobs.io.LocationUpdate;
import dev.kvrouter.jobs.io.RawRecord;
import dev.kvrouter.jobs.io.RequestSample;
import dev.kvrouter.jobs.io.ViewWriteType;
import dev.kvrouter.jobs.ratios.RatiosWorkflow;
import dev.kvrouter.jobs.view.functions.EngineTable;
import dev.kvrouter.jobs.view.functions.EngineTracker;
import dev.kvrouter.jobs.view.functions.FleetLoad;
import dev.kvrouter.jobs.view.functions.PrefixLocationTable;
import dev.kvrouter.jobs.view.functions.ReplicaPlanner;
import dev.kvrouter.jobs.view.functions.UseConfirmer;
import dev.kvrouter.jobs.view.functions.Validation;
import dev.kvrouter.jobs.view.model.BlockInput;
import dev.kvrouter.jobs.view.model.EngineStatus;
import dev.kvrouter.jobs.view.model.ViewResync;
import dev.kvrouter.redis.ViewWrite;
import dev.kvrouter.replicas.ReplicationRecommendation;
import dev.kvrouter.view.ViewChange;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;

/**
 * The routing-view job's topology. Sources and sinks come in as arguments, so tests run the same
 * topology on their own inputs and outputs.
 *
 * <pre>
 * kv events ─ decode+validate ─┐                         ┌─ dead letters
 * engine load ─ decode+validate┴─ EngineTracker (by engine) ─ PrefixLocationTable (by block) ─ Redis view
 * cached blocks requests found (ratios) ─ UseConfirmer (by engine, with engine status) ─┘
 *                                   └─ engine status ─ EngineTable (by engine, with what requests
 *                                                      showed of its speed: prefill rate, slot time) ─ Redis engine table;
 *                                                      engine-state topic,
 *                                                      fleet load (mean, Gini, hot engines) ─ Redis meta
 *                                                              └─ view changelog topic
 * hot prefixes (ratios) ─ PrefixLocationTable (holders of the first block) ─ ReplicaPlanner (with
 *                         engine status) ─ replication-recommendations topic
 * view resyncs (Redis lost the view, or the job started) ─ broadcast ─ PrefixLocationTable (every
 *                         block written again from state)
 * </pre>
 */
public final class RoutingViewWorkflow {

    /**
     * Raw Kafka records of the two input topics, what the ratios workflow finds: hot prefixes,
     * the cached blocks completed requests confirm, and what they show of their engines' speed ({@link RatiosWorkflow.Outputs}),
     * requests to write the whole view again (the job's Redis probe: {@code ViewLossProbe}), and how
     * the raw records' values decode (the job: the registry's wire format).
     */
    public record Sources(DataStream<RawRecord> kvEvents, DataStream<RawRecord> engineLoad, DataStream<HotPrefix> hotPrefixes,
                          DataStream<LocationUpdate> confirmations, DataStream<RequestSample> engineSpeeds,
                          DataStream<ViewResync> viewResyncs, DecodeFunction.Decoder decoder) {}

    public record Sinks(Sink<ViewWrite> view, Sink<ViewChange> viewChanges, Sink<EngineStateChange> engineStates,
                        Sink<DeadLetter> deadLetters, Sink<Alert> alerts, Sink<ReplicationRecommendation> recommendations) {}

    private RoutingViewWorkflow() {}

    public static void build(KvRouterJobConfig config, Sources sources, Sinks sinks) {
        Validation validation = new Validation(config.limits(), config.view().chunkTokens());
        DecodeFunction.Check<KvEventBatch> kvCheck = validation::check;
        DecodeFunction.Check<EngineLoad> loadCheck = validation::check;

        SingleOutputStreamOperator<KvEventBatch> batches = sources.kvEvents()
                .process(new DecodeFunction<>(KvEventBatch.class, sources.decoder(), kvCheck))
                .returns(TypeInformation.of(KvEventBatch.class))
                .name("decode kv events").uid("decode-kv-events");
        SingleOutputStreamOperator<EngineLoad> loads = sources.engineLoad()
                .process(new DecodeFunction<>(EngineLoad.class, sources.decoder(), loadCheck))
                .returns(TypeInformation.of(EngineLoad.class))
                .name("decode engine load").uid("decode-engine-load");

        batches.getSideOutput(DecodeFunction.DEAD_LETTERS)
                .union(loads.getSideOutput(DecodeFunction.DEAD_LETTERS))
                .sinkTo(sinks.deadLetters()).name("dead letters").uid("sink-dead-letters");

        KeySelector<KvEventBatch, String> batchEngine = b -> EngineTracker.engineKey(b.getEngineId(), b.getDataParallelRank());
        KeySelector<EngineLoad, String> loadEngine = l -> EngineTracker.engineKey(l.getEngineId(), l.getDataParallelRank());
        SingleOutputStreamOperator<LocationUpdate> updates = batches.keyBy(batchEngine)
                .connect(loads.keyBy(loadEngine))
                .process(new EngineTracker(config.view(), config.engines()))
                .returns(TypeInformation.of(LocationUpdate.class))
                .name("engines").uid("engine-tracker");
        DataStream<EngineStatus> status = updates.getSideOutput(EngineTracker.ENGINE_STATUS);

        KeySelector<BlockInput, Long> byBlock = BlockInput::block;
        KeySelector<EngineStatus, String> statusEngine = s -> s.engine;
        KeySelector<LocationUpdate, String> usedOn = u -> u.engine;
        DataStream<LocationUpdate> confirmed = status.keyBy(statusEngine).connect(sources.confirmations().keyBy(usedOn))
                .process(new UseConfirmer(config.view().lifetimesToFloor())).returns(TypeInformation.of(LocationUpdate.class))
                .name("confirm cached blocks").uid("use-confirmer");
        // Each input is wrapped where it is made (chained to its operator), then the three meet at
        // the table's keyBy: a wrap after a union is a task of its own, one more network hop for
        // every entry.
        DataStream<BlockInput> blockInputs = updates
                .map(BlockInput::of).returns(TypeInformation.of(BlockInput.class)).name("location updates").uid("block-input-updates")
                .union(confirmed.map(BlockInput::of).returns(TypeInformation.of(BlockInput.class))
                                .name("confirmed locations").uid("block-input-confirmations"),
                        sources.hotPrefixes().map(BlockInput::of).returns(TypeInformation.of(BlockInput.class))
                                .name("hot prefix lookups").uid("block-input-hot-prefixes"));
        SingleOutputStreamOperator<ViewWrite> blockWrites = blockInputs.keyBy(byBlock)
                .connect(sources.viewResyncs().broadcast(new MapStateDescriptor<?, ?>[0])) // no broadcast state: a request, not a table
                .process(new PrefixLocationTable())
                .returns(ViewWriteType.INFO)
                .name("prefix locations").uid("prefix-location-table");

        blockWrites.getSideOutput(PrefixLocationTable.VIEW_CHANGES)
                .sinkTo(sinks.viewChanges()).name("view changelog").uid("sink-view-changelog");

        // Dead engines leave the engine table; pick then ignores every entry of theirs.
        KeySelector<RequestSample, String> sampledOn = p -> p.engine;
        DataStream<RequestSample> speeds = sources.engineSpeeds().union(updates.getSideOutput(EngineTracker.PREFILL_PACE));
        DataStream<ViewWrite> engineWrites = status.keyBy(statusEngine).connect(speeds.keyBy(sampledOn))
                .process(new EngineTable(config.cost().prefillTokensPerS())).returns(ViewWriteType.INFO)
                .name("engine table").uid("engine-table");
        KeySelector<EngineStatus, String> fleet = s -> FleetLoad.FLEET;
        SingleOutputStreamOperator<ViewWrite> fleetWrites = status.keyBy(fleet)
                .process(new FleetLoad(1_000, config.view().busyFactor())).returns(ViewWriteType.INFO)
                .name("fleet load").uid("fleet-load");
        KeySelector<AlertObservation, String> alertKey = AlertObservation::key;
        fleetWrites.getSideOutput(FleetLoad.HOT_ENGINES).keyBy(alertKey)
                .process(new AlertRules()).returns(TypeInformation.of(Alert.class)).name("engine alerts").uid("engine-alerts")
                .sinkTo(sinks.alerts()).name("alerts topic").uid("sink-engine-alerts");
        KeySelector<HotPrefix, String> hotFleet = p -> FleetLoad.FLEET;
        blockWrites.getSideOutput(PrefixLocationTable.HOT_PREFIXES).keyBy(hotFleet)
                .connect(status.keyBy(fleet))
                .process(new ReplicaPlanner(config.replicas().min(), config.replicas().max(), config.view().busyFactor()))
                .returns(TypeInformation.of(ReplicationRecommendation.class)).name("replica targets").uid("replica-planner")
                .sinkTo(sinks.recommendations()).name("replication recommendations topic").uid("sink-replication-recommendations");
        blockWrites.union(engineWrites, fleetWrites).sinkTo(sinks.view()).name("redis view").uid("sink-redis-view");

        status.filter(s -> s.changed).name("health changes").uid("health-changes")
                .map(RoutingViewWorkflow::stateChange).returns(TypeInformation.of(EngineStateChange.class))
                .name("engine state").uid("engine-state")
                .sinkTo(sinks.engineStates()).name("engine-state topic").uid("sink-engine-state");
    }

    static EngineStateChange stateChange(EngineStatus s) {
        return EngineStateChange.newBuilder()
                .setEngine(s.engine).setHealth(s.currentHealth).setPrevious(s.previousHealth)
                .setReason(s.reason).setEpoch(s.epoch).setUnsynced(s.unsynced).setWaiting(s.waiting).setRunning(s.running)
                .setKvUsage(s.kvUsage).setResidencyMs(s.residencyMs).setTsMs(s.tsMs).build();
    }
}
