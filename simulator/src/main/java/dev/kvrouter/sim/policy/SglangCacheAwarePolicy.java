package dev.kvrouter.sim.policy;

import dev.kvrouter.events.RouteReason;

/**
 * SGLang router's cache-aware policy: when the fleet is imbalanced (max − min load &gt;
 * {@code absThreshold} and max &gt; {@code relThreshold} × min) the shortest queue; otherwise the
 * engine with the best prefix match in the router's own table of what it routed, if the match
 * rate (matched / prompt blocks) exceeds {@code matchThreshold}; otherwise the least loaded.
 * The chosen engine's table learns the whole prompt.
 */
public final class SglangCacheAwarePolicy implements Policy {

    private final int absThreshold;
    private final double relThreshold;
    private final double matchThreshold;
    private final RoutedPrefixTable table;

    public SglangCacheAwarePolicy(int absThreshold, double relThreshold, double matchThreshold, int tableBlocks) {
        this.absThreshold = absThreshold;
        this.relThreshold = relThreshold;
        this.matchThreshold = matchThreshold;
        this.table = new RoutedPrefixTable(tableBlocks);
    }

    /** SGLang's defaults: 64, 1.5, 0.3. */
    public static SglangCacheAwarePolicy defaults(int tableBlocks) {
        return new SglangCacheAwarePolicy(64, 1.5, 0.3, tableBlocks);
    }

    @Override
    public String name() {
        return "sglang";
    }

    @Override
    public Route route(PolicyRequest request, FleetView fleet) {
        Route r = choose(request, fleet);
        table.insert(request.chain(), r.engine());
        return r;
    }

    private Route choose(PolicyRequest request, FleetView fleet) {
        int max = Integer.MIN_VALUE;
        int min = Integer.MAX_VALUE;
        for (int e = 0; e < fleet.size(); e++) {
            if (fleet.alive(e)) {
                max = Math.max(max, fleet.load(e));
                min = Math.min(min, fleet.load(e));
            }
        }
        if (max == Integer.MIN_VALUE) {
            return new Route(0, 0, RouteReason.FALLBACK_LOAD_ONLY);
        }
        if (max - min > absThreshold && max > relThreshold * min) {
            return new Route(Loads.leastLoaded(fleet), 0, RouteReason.SPILL_BUSY);
        }
        int[] depth = table.match(request.chain(), fleet.size());
        int best = -1;
        for (int e = 0; e < fleet.size(); e++) {
            if (fleet.alive(e) && (best < 0 || depth[e] > depth[best] || (depth[e] == depth[best] && fleet.load(e) < fleet.load(best)))) {
                best = e;
            }
        }
        int blocks = request.chain().length;
        if (blocks > 0 && depth[best] > 0 && (double) depth[best] / blocks > matchThreshold) {
            return new Route(best, depth[best], RouteReason.AFFINITY);
        }
        return new Route(Loads.leastLoaded(fleet), 0, RouteReason.COLD);
    }
}
