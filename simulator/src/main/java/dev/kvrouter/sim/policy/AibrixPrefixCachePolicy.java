package dev.kvrouter.sim.policy;

import dev.kvrouter.events.RouteReason;

/**
 * AIBrix's prefix-cache router: when the fleet is imbalanced (max − min load &gt;
 * {@code imbalanceAbs}, AIBrix's {@code AIBRIX_PREFIX_CACHE_POD_RUNNING_REQUEST_IMBALANCE_ABS_COUNT},
 * default 8) the least loaded; otherwise engines whose load is within mean + {@code sigmas} σ of
 * the fleet are candidates, and among them the best prefix match in the router's own table of
 * what it routed wins, ties to the less loaded; no match, the least-loaded candidate.
 * {@code imbalanceAbs} ≤ 0 turns the imbalance check off (the bare mean + 2σ rule).
 */
public final class AibrixPrefixCachePolicy extends RoutedTablePolicy {

    private final int imbalanceAbs;
    private final double sigmas;

    public AibrixPrefixCachePolicy(int imbalanceAbs, double sigmas, int tableBlocks) {
        super(tableBlocks);
        this.imbalanceAbs = imbalanceAbs;
        this.sigmas = sigmas;
    }

    @Override
    public String name() {
        return "aibrix";
    }

    @Override
    Route choose(PolicyRequest request, FleetView fleet) {
        Loads.Spread loads = Loads.spread(fleet);
        if (imbalanceAbs > 0 && loads.live() > 0 && loads.max() - loads.min() > imbalanceAbs) {
            return new Route(Loads.leastLoaded(fleet), 0, RouteReason.SPILL_BUSY);
        }
        double limit = loads.mean() + sigmas * loads.stddev();
        int[] depth = match(request, fleet);
        int best = longestMatch(depth, fleet, e -> fleet.load(e) <= limit);
        if (best < 0) {
            return new Route(Loads.leastLoaded(fleet), 0, RouteReason.FALLBACK_LOAD_ONLY);
        }
        if (depth[best] > 0) {
            return new Route(best, depth[best], RouteReason.AFFINITY);
        }
        return new Route(best, 0, RouteReason.COLD);
    }
}
