package dev.kvrouter.sim.policy;

import dev.kvrouter.events.RouteReason;

/**
 * The ceiling of affinity under the view's load cap: perfect knowledge of every engine's actual
 * cache at the moment of routing. The engine holding the longest prefix, unless its load is above
 * {@code hotFactor} × the fleet mean (the view's hot rule, k = 2), then the next-best holder that
 * is not hot ({@code SPILL_HOT}); no holder, the least-loaded engine ({@code COLD}).
 */
public final class OraclePolicy implements Policy {

    private final double hotFactor;

    public OraclePolicy(double hotFactor) {
        this.hotFactor = hotFactor;
    }

    @Override
    public String name() {
        return "oracle";
    }

    @Override
    public Route route(PolicyRequest request, FleetView fleet) {
        double mean = Loads.mean(fleet);
        int bestAny = -1;
        int bestAnyDepth = 0;
        int bestCool = -1;
        int bestCoolDepth = 0;
        for (int e = 0; e < fleet.size(); e++) {
            if (!fleet.alive(e)) {
                continue;
            }
            int depth = fleet.trueCachedPrefix(e, request.chain());
            if (depth == 0) {
                continue;
            }
            if (better(fleet, e, depth, bestAny, bestAnyDepth)) {
                bestAny = e;
                bestAnyDepth = depth;
            }
            if (!Loads.hot(fleet, e, mean, hotFactor) && better(fleet, e, depth, bestCool, bestCoolDepth)) {
                bestCool = e;
                bestCoolDepth = depth;
            }
        }
        if (bestAny < 0) {
            return new Route(Loads.leastLoaded(fleet), 0, RouteReason.COLD);
        }
        if (bestCool == bestAny || (bestCool >= 0 && bestCoolDepth == bestAnyDepth)) {
            return new Route(bestCool, bestCoolDepth, RouteReason.AFFINITY);
        }
        if (bestCool >= 0) {
            return new Route(bestCool, bestCoolDepth, RouteReason.SPILL_HOT);
        }
        int cool = Loads.leastLoaded(fleet, e -> !Loads.hot(fleet, e, mean, hotFactor));
        return new Route(cool < 0 ? Loads.leastLoaded(fleet) : cool, 0, RouteReason.SPILL_HOT);
    }

    private static boolean better(FleetView fleet, int e, int depth, int best, int bestDepth) {
        return best < 0 || depth > bestDepth || (depth == bestDepth && fleet.load(e) < fleet.load(best));
    }
}
