package dev.kvrouter.sim.policy;

import dev.kvrouter.events.RouteReason;

/**
 * A policy's answer.
 *
 * @param engine          index of the chosen engine in the fleet
 * @param predictedBlocks  blocks the policy expects the engine to hold (0 when not routed for affinity)
 * @param bestHolderBlocks blocks the policy believes the best holder has, whichever engine it chose (what affinity
 *                         would match)
 */
public record Route(int engine, int predictedBlocks, RouteReason reason, int bestHolderBlocks) {

    /** A route whose chosen engine is the best holder the policy knows of. */
    public Route(int engine, int predictedBlocks, RouteReason reason) {
        this(engine, predictedBlocks, reason, predictedBlocks);
    }
}
