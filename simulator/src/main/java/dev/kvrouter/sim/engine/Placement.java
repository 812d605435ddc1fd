package dev.kvrouter.sim.engine;

import dev.kvrouter.events.RouteReason;
import dev.kvrouter.sim.workload.SimRequest;

/**
 * A request as one fleet placed it: its id in that fleet, its canonical block chain, what the
 * policy predicted the engine holds (for the staleness ratio), and how long its balancer held it
 * before placing it (every engine full: {@code KvRouterClient.Options#hold}).
 */
public record Placement(String requestId, SimRequest request, long[] chain, String engineId, int predictedBlocks, RouteReason reason,
                        double heldMs) {

    /** Placed as it arrived. */
    public Placement(String requestId, SimRequest request, long[] chain, String engineId, int predictedBlocks, RouteReason reason) {
        this(requestId, request, chain, engineId, predictedBlocks, reason, 0);
    }

    /** Routed for affinity: the policy expected cached blocks there. */
    public boolean forAffinity() {
        return predictedBlocks > 0;
    }
}
