package dev.kvrouter.sim.policy;

import dev.kvrouter.events.RouteReason;

/** The live engine with the fewest requests waiting or running; no affinity. */
public final class LeastLoadedPolicy implements Policy {

    @Override
    public String name() {
        return "least-loaded";
    }

    @Override
    public Route route(PolicyRequest request, FleetView fleet) {
        return new Route(Loads.leastLoaded(fleet), 0, RouteReason.FALLBACK_LOAD_ONLY);
    }
}
