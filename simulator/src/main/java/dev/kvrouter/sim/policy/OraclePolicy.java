package dev.kvrouter.sim.policy;

import dev.kvrouter.events.RouteReason;

/**
 * The view's placement rule with perfect knowledge: every engine's actual cache and actual queues at
 * the moment of routing. The request goes where it costs the least delay — the true wait before
 * its prefill could start there (for a running slot and for the prefill queued ahead) plus its own
 * uncached prefill at the engine's true current speed, weighted by {@code uncachedPrefillWeight} as
 * the view weighs it ({@code cost.uncached-prefill-weight}, 3: the uncached prefill also delays
 * the requests queued behind it and takes cache room) — ties to the longer cached prefix, then the
 * lower load. It is the ceiling of what the view could do with a perfect view.
 */
public final class OraclePolicy implements Policy {

    private final double uncachedPrefillWeight;

    public OraclePolicy(double uncachedPrefillWeight) {
        this.uncachedPrefillWeight = uncachedPrefillWeight;
    }

    @Override
    public String name() {
        return "oracle";
    }

    @Override
    public Route route(PolicyRequest request, FleetView fleet) {
        int best = -1;
        int bestDepth = 0;
        double bestDelay = Double.POSITIVE_INFINITY;
        int longest = 0;
        for (int e = 0; e < fleet.size(); e++) {
            if (!fleet.alive(e)) {
                continue;
            }
            int depth = fleet.trueCachedPrefix(e, request.chain());
            longest = Math.max(longest, depth);
            int uncached = Math.max(0, request.promptTokens() - depth * fleet.blockTokens());
            double delay = fleet.trueStartDelayMs(e) + uncachedPrefillWeight * fleet.truePrefillMs(e, uncached);
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
        RouteReason reason = bestDepth == 0 ? (longest == 0 ? RouteReason.COLD : RouteReason.SPILL_BUSY)
                : bestDepth == longest ? RouteReason.AFFINITY : RouteReason.REPLICA;
        return new Route(best, bestDepth, reason, longest);
    }
}
