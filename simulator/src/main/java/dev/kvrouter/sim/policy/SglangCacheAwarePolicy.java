package dev.kvrouter.sim.policy;

import dev.kvrouter.events.RouteReason;

/**
 * SGLang router's cache-aware policy: when the fleet is imbalanced (max − min load &gt;
 * {@code absThreshold} and max &gt; {@code relThreshold} × min) the shortest queue; otherwise the
 * engine with the best prefix match in the router's own table of what it routed, if the match
 * rate (matched / prompt blocks) exceeds {@code matchThreshold}; otherwise the least loaded.
 * The chosen engine's table learns the whole prompt.
 */
public final class SglangCacheAwarePolicy extends RoutedTablePolicy {

    private final int absThreshold;
    private final double relThreshold;
    private final double matchThreshold;

    public SglangCacheAwarePolicy(int absThreshold, double relThreshold, double matchThreshold, int tableBlocks) {
        super(tableBlocks);
        this.absThreshold = absThreshold;
        this.relThreshold = relThreshold;
        this.matchThreshold = matchThreshold;
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
    Route choose(PolicyRequest request, FleetView fleet) {
        Loads.Spread loads = Loads.spread(fleet);
        if (loads.live() == 0) {
            return new Route(0, 0, RouteReason.FALLBACK_LOAD_ONLY);
        }
        int max = loads.max();
        int min = loads.min();
        if (max - min > absThreshold && max > relThreshold * min) {
            return new Route(Loads.leastLoaded(fleet), 0, RouteReason.SPILL_BUSY);
        }
        int[] depth = match(request, fleet);
        int best = longestMatch(depth, fleet, e -> true);
        int blocks = request.chain().length;
        if (blocks > 0 && depth[best] > 0 && (double) depth[best] / blocks > matchThreshold) {
            return new Route(best, depth[best], RouteReason.AFFINITY);
        }
        return new Route(Loads.leastLoaded(fleet), 0, RouteReason.COLD);
    }
}
