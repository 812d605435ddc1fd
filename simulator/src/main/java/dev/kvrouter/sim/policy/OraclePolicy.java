package dev.kvrouter.sim.policy;

import dev.kvrouter.contract.ViewContract;
import dev.kvrouter.events.RouteReason;
import java.util.HashMap;
import java.util.Map;

/**
 * The view's placement rule with perfect knowledge: every engine's actual cache and actual queues at
 * the moment of routing. The request goes where it costs the least delay — the true wait before
 * its prefill could start there (for a running slot and for the prefill queued ahead) plus its own
 * uncached prefill at the engine's true current speed, weighted by {@code uncachedPrefillWeight} as
 * the view weighs it ({@code cost.uncached-prefill-weight}, 3: the uncached prefill also delays
 * the requests queued behind it and takes cache room) — ties to the longer cached prefix, then the
 * lower load. Like the view, a client's burst (at least {@code clientMinInflight} requests in flight)
 * copies its prompt to a spare engine before its holders fill (kvrouter.lua, spare_for_burst), here
 * from the true slots and the copies truly being computed. It is the ceiling of what the view could
 * do with a perfect view.
 */
public final class OraclePolicy implements Policy {

    /** The pick's (the view's contract): every holder has used this share of its slots. */
    static final double WARM_AT = ViewContract.PickConstants.WARM_AT;
    /** The pick's (the view's contract): a spare has at least this share of its slots free. */
    static final double SPARE_FREE = ViewContract.PickConstants.SPARE_FREE;

    private final double uncachedPrefillWeight;
    private final int clientMinInflight;
    /** Requests in flight per client: placed, not finished. An entry leaves at zero. */
    private final Map<String, Integer> inflight = new HashMap<>();

    public OraclePolicy(double uncachedPrefillWeight, int clientMinInflight) {
        this.uncachedPrefillWeight = uncachedPrefillWeight;
        this.clientMinInflight = clientMinInflight;
    }

    @Override
    public String name() {
        return "oracle";
    }

    @Override
    public Route route(PolicyRequest request, FleetView fleet) {
        Route route = choose(request, fleet);
        if (request.clientId() != null) {
            inflight.merge(request.clientId(), 1, Integer::sum);
        }
        return route;
    }

    @Override
    public void finished(PolicyRequest request, int engine) {
        // State clearing: a client with nothing in flight leaves the map.
        if (request.clientId() != null) {
            inflight.computeIfPresent(request.clientId(), (c, n) -> n > 1 ? n - 1 : null);
        }
    }

    /** Clients with requests in flight (for tests: the map empties as requests finish). */
    int clientsInFlight() {
        return inflight.size();
    }

    private Route choose(PolicyRequest request, FleetView fleet) {
        int best = -1;
        int bestDepth = 0;
        double bestDelay = Double.POSITIVE_INFINITY;
        int longest = 0;
        int[] depths = new int[fleet.size()];
        for (int e = 0; e < fleet.size(); e++) {
            if (!fleet.alive(e)) {
                continue;
            }
            int depth = fleet.trueCachedPrefix(e, request.chain());
            depths[e] = depth;
            longest = Math.max(longest, depth);
            double delay = delay(request, fleet, e, depth);
            if (best < 0 || delay < bestDelay || (delay == bestDelay && (depth > bestDepth
                    || (depth == bestDepth && fleet.load(e) < fleet.load(best))))) {
                best = e;
                bestDepth = depth;
                bestDelay = delay;
            }
        }
        if (best < 0) {
            return new Route(Loads.leastLoaded(fleet), 0, RouteReason.COLD, 0);
        }
        if (bestDepth > 0) {
            int spare = spareForBurst(request, fleet, depths, longest);
            if (spare >= 0) {
                return new Route(spare, 0, RouteReason.SPILL_HOT, longest);
            }
        }
        RouteReason reason = bestDepth == 0 ? (longest == 0 ? RouteReason.COLD : RouteReason.SPILL_BUSY)
                : bestDepth == longest ? RouteReason.AFFINITY : RouteReason.REPLICA;
        return new Route(best, bestDepth, reason, longest);
    }

    private double delay(PolicyRequest request, FleetView fleet, int engine, int depth) {
        int uncached = Math.max(0, request.promptTokens() - depth * fleet.blockTokens());
        return fleet.trueStartDelayMs(engine) + uncachedPrefillWeight * fleet.truePrefillMs(engine, uncached);
    }

    /**
     * The engine a burst's prompt is copied to before its holders fill, or -1: the client has
     * clientMinInflight requests in flight with this one, every holder within 10 % of the longest run
     * has used WARM_AT of its slots, no engine is computing half the run or more, and a live engine
     * that holds none of it has SPARE_FREE of its slots free and no wait (the least delay of those).
     */
    private int spareForBurst(PolicyRequest request, FleetView fleet, int[] depths, int longest) {
        if (request.clientId() == null || inflight.getOrDefault(request.clientId(), 0) + 1 < clientMinInflight) {
            return -1;
        }
        for (int e = 0; e < fleet.size(); e++) {
            if (!fleet.alive(e)) {
                continue;
            }
            if (depths[e] * 10 >= longest * 9 && depths[e] > 0 && fleet.load(e) + 1 < WARM_AT * fleet.slots(e)) {
                return -1;
            }
            if (fleet.trueComputingPrefix(e, request.chain()) * 2 >= longest) {
                return -1;
            }
        }
        int spare = -1;
        double spareDelay = Double.POSITIVE_INFINITY;
        for (int e = 0; e < fleet.size(); e++) {
            if (!fleet.alive(e) || depths[e] > 0 || fleet.slots(e) - fleet.load(e) < SPARE_FREE * fleet.slots(e)
                    || fleet.trueStartDelayMs(e) > 0) {
                continue;
            }
            double delay = delay(request, fleet, e, 0);
            if (delay < spareDelay) {
                spare = e;
                spareDelay = delay;
            }
        }
        return spare;
    }
}
