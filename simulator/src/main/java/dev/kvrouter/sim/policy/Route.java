package dev.kvrouter.sim.policy;

import dev.kvrouter.events.RouteReason;

/**
 * A policy's answer.
 *
 * @param engine          index of the chosen engine in the fleet; -1 when the request is held ({@link #hold()})
 * @param predictedBlocks  blocks the policy expects the engine to hold (0 when not routed for affinity)
 * @param bestHolderBlocks blocks the policy believes the best holder has, whichever engine it chose (what affinity
 *                         would match)
 * @param savedPrefillMs   the policy's cost view, when it has one (the view's): prefill milliseconds the engine is
 *                         expected to skip; null otherwise
 * @param addedWaitMs      ...and how much later the request starts there than on the soonest engine; null otherwise
 * @param reasonDetail     the policy's own reason where it is finer than {@code reason}, its family (the view's:
 *                         RouteReasons.detail); null otherwise
 */
public record Route(int engine, int predictedBlocks, RouteReason reason, int bestHolderBlocks, Double savedPrefillMs, Double addedWaitMs,
                    String reasonDetail) {

    /** The answer that places nothing yet: every engine is full and the balancer holds the request, to ask again. */
    public static Route hold() {
        return new Route(-1, 0, RouteReason.UNKNOWN, 0);
    }

    /** A route whose reason says it all. */
    public Route(int engine, int predictedBlocks, RouteReason reason, int bestHolderBlocks, Double savedPrefillMs, Double addedWaitMs) {
        this(engine, predictedBlocks, reason, bestHolderBlocks, savedPrefillMs, addedWaitMs, null);
    }

    /** A route without a cost view. */
    public Route(int engine, int predictedBlocks, RouteReason reason, int bestHolderBlocks) {
        this(engine, predictedBlocks, reason, bestHolderBlocks, null, null);
    }

    /** The balancer holds the request ({@link #hold()}). */
    public boolean held() {
        return engine < 0;
    }

    /** A route whose chosen engine is the best holder the policy knows of. */
    public Route(int engine, int predictedBlocks, RouteReason reason) {
        this(engine, predictedBlocks, reason, predictedBlocks);
    }
}
