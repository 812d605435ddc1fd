package dev.kvrouter.sim.engine;

import dev.kvrouter.events.RouteReason;
import dev.kvrouter.sim.workload.SimRequest;

/**
 * A request as one fleet placed it: its id in that fleet, its canonical block chain, and what the
 * policy predicted the engine holds (for the staleness ratio).
 */
public record Placement(String requestId, SimRequest request, long[] chain, String engineId, int predictedBlocks, RouteReason reason) {

    /** Routed for affinity: the policy expected cached blocks there. */
    public boolean forAffinity() {
        return predictedBlocks > 0;
    }
}
