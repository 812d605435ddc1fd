package dev.kvrouter.sim;

import dev.kvrouter.events.RoutingDecision;
import dev.kvrouter.sim.engine.Completion;
import dev.kvrouter.sim.engine.EngineConfig;
import dev.kvrouter.sim.engine.Placement;
import dev.kvrouter.sim.engine.SimEngine;
import dev.kvrouter.sim.metrics.PolicyMetrics;
import dev.kvrouter.sim.metrics.TruthLog;
import dev.kvrouter.sim.policy.FleetView;
import dev.kvrouter.sim.policy.Policy;
import dev.kvrouter.sim.policy.PolicyRequest;
import dev.kvrouter.sim.policy.Route;
import dev.kvrouter.sim.sink.EventSink;
import dev.kvrouter.sim.workload.SimRequest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** One policy's own copy of the fleet: its engines, its policy, its metrics, its sink. */
public final class Fleet implements FleetView {

    private final Policy policy;
    private final List<SimEngine> engines = new ArrayList<>();
    private final Map<String, Integer> index = new HashMap<>();
    private final EventSink sink;
    private final PolicyMetrics metrics;
    private final VirtualClock clock;
    private long pending;

    /** A request its balancer holds (every engine full), to place when it asks again. */
    private record Held(String requestId, SimRequest request, long[] chain, double arrivedMs) {}

    /**
     * How often a balancer holding requests asks again besides when one of its own requests ends:
     * what tells it of slots freed by another balancer's requests. Well within the second after which
     * the view gives a silent request's place away.
     */
    static final double HOLD_POLL_MS = 25;
    /** How often the balancers keep the places of the requests they hold and did not ask again for. */
    static final double HOLD_KEEP_MS = 250;
    private double keptAtMs = Double.NEGATIVE_INFINITY;
    /** Held requests in arrival order (each balancer asks for its own oldest first). */
    private final ArrayDeque<Held> held = new ArrayDeque<>();
    private boolean pollScheduled;
    /** Where each placement is written beside the true caches (--truth-log), or null. */
    private TruthLog truth;

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

    /** Requests placed and not yet finished, and those held by the balancers. */
    public long pending() {
        return pending + held.size();
    }

    /**
     * Places a request: the policy decides, the decision is published, the engine gets it. Or the
     * policy's balancer holds it (every engine full), and asks again when one of its requests ends
     * and every {@link #HOLD_POLL_MS}.
     */
    public void arrive(String requestId, SimRequest request, long[] chain) {
        Held r = new Held(requestId, request, chain, clock.nowMs());
        if (!place(r)) {
            held.add(r);
            schedulePoll();
        }
    }

    /** Asks the policy again for the held requests of one balancer (all with -1), oldest first, until one is held again. */
    private void retryHeld(int balancer) {
        Set<Integer> stillFull = new HashSet<>();
        for (Iterator<Held> it = held.iterator(); it.hasNext(); ) {
            Held r = it.next();
            int b = policy.balancerOf(r.requestId());
            if ((balancer >= 0 && b != balancer) || stillFull.contains(b)) {
                continue;
            }
            if (place(r)) {
                it.remove();
            } else {
                stillFull.add(b);
            }
        }
    }

    private void schedulePoll() {
        if (pollScheduled || held.isEmpty()) {
            return;
        }
        pollScheduled = true;
        clock.after(HOLD_POLL_MS, () -> {
            pollScheduled = false;
            retryHeld(-1);
            if (!held.isEmpty() && clock.nowMs() - keptAtMs >= HOLD_KEEP_MS) {
                keptAtMs = clock.nowMs();
                policy.holding(held.stream().map(Held::requestId).toList());
            }
            schedulePoll(); // stops once nothing is held
        });
    }

    /** False when the policy holds the request. */
    private boolean place(Held r) {
        String requestId = r.requestId();
        SimRequest request = r.request();
        long[] chain = r.chain();
        Route route = policy.route(new PolicyRequest(requestId, chain, request.requestClass(), request.clientId(), request.promptTokens()), this);
        if (route.held()) {
            return false;
        }
        SimEngine engine = engines.get(route.engine());
        Placement p = new Placement(requestId, request, chain, engine.id(), route.predictedBlocks(), route.reason(),
                clock.nowMs() - r.arrivedMs());
        if (sink.enabled()) {
            List<Long> hashes = new ArrayList<>(chain.length);
            for (long h : chain) {
                hashes.add(h);
            }
            sink.decision(RoutingDecision.newBuilder().setRequestId(requestId).setClientId(request.clientId())
                    .setPrefixClass(request.requestClass()).setModel(engine.config().model()).setEngineId(engine.id())
                    .setPredictedCachedBlocks(route.predictedBlocks()).setReason(route.reason()).setReasonDetail(route.reasonDetail())
                    .setTsMs(clock.epochMs()).setPromptBlockHashes(hashes)
                    .setBestHolderBlocks(route.bestHolderBlocks()).setSavedPrefillMs(route.savedPrefillMs())
                    .setAddedWaitMs(route.addedWaitMs()).build());
        }
        if (truth != null) {
            int trueBest = 0;
            String trueEngine = "";
            for (SimEngine e : engines) {
                int d = e.cachedPrefix(chain);
                if (d > trueBest) {
                    trueBest = d;
                    trueEngine = e.id();
                }
            }
            truth.placed(policy.name(), requestId, clock.nowMs(), route.reason(), engine.id(), route.predictedBlocks(), route.bestHolderBlocks(),
                    engine.cachedPrefix(chain), trueBest, trueEngine, chain.length);
        }
        metrics.arrived(p, route.engine());
        pending++;
        engine.submit(p);
        return true;
    }

    private void completed(Completion c) {
        pending--;
        metrics.completed(c);
        policy.finished(new PolicyRequest(c.placement().requestId(), c.placement().chain(), c.placement().request().requestClass(),
                c.placement().request().clientId(), c.placement().request().promptTokens()), index.get(c.placement().engineId()));
        if (!held.isEmpty()) {
            // Its balancer saw the request end (a slot freed): it asks again for what it holds, once
            // the engine has finished with this one.
            int balancer = policy.balancerOf(c.placement().requestId());
            clock.after(0, () -> retryHeld(balancer));
        }
    }

    /** Writes each placement beside what the engines truly held ({@link TruthLog}). */
    public void recordTruth(TruthLog log) {
        this.truth = log;
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
