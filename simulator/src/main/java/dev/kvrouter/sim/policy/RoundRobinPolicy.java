package dev.kvrouter.sim.policy;

import dev.kvrouter.events.RouteReason;

/** Each live engine in turn: perfectly even placement, no affinity at all. */
public final class RoundRobinPolicy implements Policy {

    private int next;

    @Override
    public String name() {
        return "round-robin";
    }

    @Override
    public Route route(PolicyRequest request, FleetView fleet) {
        for (int i = 0; i < fleet.size(); i++) {
            int e = (next + i) % fleet.size();
            if (fleet.alive(e)) {
                next = e + 1;
                return new Route(e, 0, RouteReason.FALLBACK_LOAD_ONLY);
            }
        }
        return new Route(0, 0, RouteReason.FALLBACK_LOAD_ONLY);
    }
}
