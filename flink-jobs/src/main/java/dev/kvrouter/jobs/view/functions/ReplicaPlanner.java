package dev.kvrouter.jobs.view.functions;

import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.events.EngineHealth;
import dev.kvrouter.events.EngineRole;
import dev.kvrouter.jobs.io.HotPrefix;
import dev.kvrouter.jobs.policy.ReplicaTargets;
import dev.kvrouter.jobs.view.model.EngineStatus;
import dev.kvrouter.replicas.ReplicationRecommendation;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Replica targets for hot prefixes, on one key (the fleet): keeps every live engine's health and
 * load from the engine statuses, and for each hot prefix (with its holders, from the prefix-location
 * table) that has fewer live replicas than its target, recommends the engines to warm it on
 * ({@link ReplicaTargets}). How often a prefix comes here is bounded upstream (replicas.interval).
 */
public final class ReplicaPlanner extends KeyedCoProcessFunction<String, HotPrefix, EngineStatus, ReplicationRecommendation> {

    /** The name of the latest-status-per-engine state (savepoints know it by this name). */
    private static final String ENGINES_STATE = "engines";

    private final int min;
    private final int max;
    private final double busyFactor;
    private transient MapState<String, EngineStatus> engines;

    public ReplicaPlanner(int min, int max, double busyFactor) {
        this.min = min;
        this.max = max;
        this.busyFactor = busyFactor;
    }

    @Override
    public void open(OpenContext openContext) {
        engines = getRuntimeContext().getMapState(
                new MapStateDescriptor<>(ENGINES_STATE, Types.STRING, TypeInformation.of(EngineStatus.class)));
    }

    @Override
    public void processElement2(EngineStatus s, Context ctx, Collector<ReplicationRecommendation> out) throws Exception {
        if (s.currentHealth == EngineHealth.DEAD) {
            // State clearing: a dead engine holds nothing and takes nothing; its next report brings it back.
            engines.remove(s.engine);
        } else {
            engines.put(s.engine, s);
        }
    }

    @Override
    public void processElement1(HotPrefix p, Context ctx, Collector<ReplicationRecommendation> out) throws Exception {
        Map<String, ReplicaTargets.Engine> fleet = new TreeMap<>();
        for (Map.Entry<String, EngineStatus> e : engines.entries()) {
            EngineStatus s = e.getValue();
            if (s.currentHealth == null) {
                continue; // restored from a version-1 savepoint: unknown until the engine's next status replaces it
            }
            if (s.servingRole == EngineRole.DECODE) {
                continue; // the decode pool of disaggregated serving takes hand-offs, not prompts
            }
            fleet.put(s.engine, new ReplicaTargets.Engine(s.engine, s.currentHealth, s.waiting + s.running, s.unsynced));
        }
        List<String> holders = p.holders == null ? List.of() : Arrays.asList(p.holders);
        ReplicaTargets.Plan plan = ReplicaTargets.plan(holders, fleet, min, max, busyFactor);
        for (String engine : plan.warmOn()) {
            out.collect(ReplicationRecommendation.newBuilder()
                    .setRootBlock(p.rootBlock)
                    .setPrefixBlockHashes(Arrays.stream(p.prefixBlocks).boxed().toList())
                    .setPrefixClass(p.prefixClass)
                    .setEngineId(engine)
                    .setSourceEngine(plan.source())
                    .setHolders(holders)
                    .setLiveReplicas(plan.live())
                    .setTargetReplicas(plan.target())
                    .setRequests(p.requests)
                    .setExemplarRequestId(p.exemplarRequestId)
                    .setReason("prefix " + ViewLayout.hex(p.rootBlock) + " (" + p.requests + " requests) has " + plan.live()
                            + " live replica(s) of a target of " + plan.target()
                            + (plan.target() > min ? " (every holder is loaded above the fleet mean)" : "")
                            + ": warm it on " + engine + (plan.source() == null ? " (no live holder to copy from)"
                            : " (copy from " + plan.source() + " where the fabric allows)"))
                    .setTsMs(ctx.timerService().currentProcessingTime())
                    .build());
        }
    }
}
