package dev.kvrouter.sim;

import dev.kvrouter.events.RoutingDecision;
import dev.kvrouter.sim.engine.Completion;
import dev.kvrouter.sim.engine.EngineConfig;
import dev.kvrouter.sim.engine.Placement;
import dev.kvrouter.sim.engine.SimEngine;
import dev.kvrouter.sim.metrics.PolicyMetrics;
import dev.kvrouter.sim.policy.FleetView;
import dev.kvrouter.sim.policy.Policy;
import dev.kvrouter.sim.policy.PolicyRequest;
import dev.kvrouter.sim.policy.Route;
import dev.kvrouter.sim.sink.EventSink;
import dev.kvrouter.sim.workload.SimRequest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** One policy's own copy of the fleet: its engines, its policy, its metrics, its sink. */
public final class Fleet implements FleetView {

    private final Policy policy;
    private final List<SimEngine> engines = new ArrayList<>();
    private final Map<String, Integer> index = new HashMap<>();
    private final EventSink sink;
    private final PolicyMetrics metrics;
    private final VirtualClock clock;
    private long pending;

    public Fleet(Policy policy, int size, EngineConfig config, VirtualClock clock, EventSink sink, double windowMs) {
        this.policy = policy;
        this.sink = sink;
        this.clock = clock;
        this.metrics = new PolicyMetrics(policy.name(), size, windowMs);
        for (int e = 0; e < size; e++) {
            String id = "sim-engine-" + e;
            index.put(id, e);
            engines.add(new SimEngine(id, config, clock, sink, this::completed));
        }
    }

    public String name() {
        return policy.name();
    }

    public Policy policy() {
        return policy;
    }

    public List<SimEngine> engines() {
        return engines;
    }

    public PolicyMetrics metrics() {
        return metrics;
    }

    public EventSink sink() {
        return sink;
    }

    /** Requests placed and not yet finished. */
    public long pending() {
        return pending;
    }

    /** Places a request: the policy decides, the decision is published, the engine gets it. */
    public void arrive(String requestId, SimRequest request, long[] chain) {
        Route route = policy.route(new PolicyRequest(requestId, chain, request.requestClass(), request.clientId(), request.promptTokens()), this);
        SimEngine engine = engines.get(route.engine());
        Placement p = new Placement(requestId, request, chain, engine.id(), route.predictedBlocks(), route.reason());
        if (sink.enabled()) {
            List<Long> hashes = new ArrayList<>(chain.length);
            for (long h : chain) {
                hashes.add(h);
            }
            sink.decision(RoutingDecision.newBuilder().setRequestId(requestId).setClientId(request.clientId())
                    .setPrefixClass(request.requestClass()).setModel(engine.config().model()).setEngineId(engine.id())
                    .setPredictedCachedBlocks(route.predictedBlocks()).setReason(route.reason())
                    .setTsMs(clock.epochMs()).setPromptBlockHashes(hashes)
                    .setBestHolderBlocks(route.bestHolderBlocks()).build());
        }
        metrics.arrived(p, route.engine());
        pending++;
        engine.submit(p);
    }

    private void completed(Completion c) {
        pending--;
        metrics.completed(c);
        policy.finished(new PolicyRequest(c.placement().requestId(), c.placement().chain(), c.placement().request().requestClass(),
                c.placement().request().clientId(), c.placement().request().promptTokens()), index.get(c.placement().engineId()));
    }

    public void sampleLoads() {
        double[] live = engines.stream().filter(SimEngine::up).mapToDouble(SimEngine::load).toArray();
        metrics.sampleLoads(clock.nowMs(), live);
    }

    @Override
    public int size() {
        return engines.size();
    }

    @Override
    public String engineId(int engine) {
        return engines.get(engine).id();
    }

    @Override
    public int indexOf(String engineId) {
        return index.getOrDefault(engineId, -1);
    }

    @Override
    public boolean alive(int engine) {
        return engines.get(engine).up();
    }

    @Override
    public int load(int engine) {
        return engines.get(engine).load();
    }

    @Override
    public int trueCachedPrefix(int engine, long[] chain) {
        return engines.get(engine).cachedPrefix(chain);
    }

    @Override
    public double trueStartDelayMs(int engine) {
        return engines.get(engine).startDelayMs();
    }

    @Override
    public double truePrefillMs(int engine, int tokens) {
        return engines.get(engine).prefillMs(tokens);
    }

    @Override
    public int slots(int engine) {
        return engines.get(engine).config().maxRunning();
    }

    @Override
    public int trueComputingPrefix(int engine, long[] chain) {
        return engines.get(engine).computingPrefix(chain);
    }

    @Override
    public int blockTokens() {
        return engines.get(0).config().blockTokens();
    }
}
