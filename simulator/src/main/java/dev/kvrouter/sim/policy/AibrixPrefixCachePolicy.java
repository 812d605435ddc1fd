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
public final class AibrixPrefixCachePolicy implements Policy {

    private final int imbalanceAbs;
    private final double sigmas;
    private final RoutedPrefixTable table;

    public AibrixPrefixCachePolicy(int imbalanceAbs, double sigmas, int tableBlocks) {
        this.imbalanceAbs = imbalanceAbs;
        this.sigmas = sigmas;
        this.table = new RoutedPrefixTable(tableBlocks);
    }

    @Override
    public String name() {
        return "aibrix";
    }

    @Override
    public Route route(PolicyRequest request, FleetView fleet) {
        Route r = choose(request, fleet);
        table.insert(request.chain(), r.engine());
        return r;
    }

    private Route choose(PolicyRequest request, FleetView fleet) {
        double mean = Loads.mean(fleet);
        double var = 0;
        int n = 0;
        int max = Integer.MIN_VALUE;
        int min = Integer.MAX_VALUE;
        for (int e = 0; e < fleet.size(); e++) {
            if (fleet.alive(e)) {
                max = Math.max(max, fleet.load(e));
                min = Math.min(min, fleet.load(e));
                var += (fleet.load(e) - mean) * (fleet.load(e) - mean);
                n++;
            }
        }
        if (imbalanceAbs > 0 && n > 0 && max - min > imbalanceAbs) {
            return new Route(Loads.leastLoaded(fleet), 0, RouteReason.SPILL_BUSY);
        }
        double limit = mean + sigmas * Math.sqrt(n == 0 ? 0 : var / n);
        int[] depth = table.match(request.chain(), fleet.size());
        int best = -1;
        for (int e = 0; e < fleet.size(); e++) {
            if (!fleet.alive(e) || fleet.load(e) > limit) {
                continue;
            }
            if (best < 0 || depth[e] > depth[best] || (depth[e] == depth[best] && fleet.load(e) < fleet.load(best))) {
                best = e;
            }
        }
        if (best < 0) {
            return new Route(Loads.leastLoaded(fleet), 0, RouteReason.FALLBACK_LOAD_ONLY);
        }
        if (depth[best] > 0) {
            return new Route(best, depth[best], RouteReason.AFFINITY);
        }
        return new Route(best, 0, RouteReason.COLD);
    }
}
