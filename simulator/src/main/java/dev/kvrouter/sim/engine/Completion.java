package dev.kvrouter.sim.engine;

import dev.kvrouter.events.OutcomeStatus;

/**
 * How a request ended on its engine.
 *
 * @param cachedBlocks prompt blocks found in the cache when the engine scheduled it (-1 when it never was)
 * @param queueMs      arrival at the balancer to prefill start (the time held there included)
 * @param ttftMs       arrival at the balancer to the end of its prefill (first token)
 */
public record Completion(Placement placement, OutcomeStatus status, int promptBlocks, int cachedBlocks, int cachedTokens,
                         double queueMs, double ttftMs, double finishedAtMs) {

    public boolean ok() {
        return status == OutcomeStatus.OK;
    }

    public boolean hit() {
        return cachedBlocks > 0;
    }

    /** Routed for affinity and found fewer blocks than predicted. */
    public boolean stale() {
        return placement.forAffinity() && cachedBlocks < placement.predictedBlocks();
    }
}
