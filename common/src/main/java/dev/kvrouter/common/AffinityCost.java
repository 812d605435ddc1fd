package dev.kvrouter.common;

/**
 * The two figures a placement is judged by, as the job's ratios and {@code kvr explain} read them
 * back: what it saved (the prefill its decision expected to skip, in the share of the predicted
 * blocks the engine really had cached) against the wait it added (how much later the request could
 * start on the chosen engine than where it would have gone with nobody's cache counted).
 */
public final class AffinityCost {

    private AffinityCost() {}

    /**
     * What a placement really saved, in prefill milliseconds: the expected saving in the share of the
     * predicted blocks the engine had cached (a stale prediction saves nothing, a partly stale one
     * part); a request that did not complete saved nothing. A saving predicted with no block (a
     * transfer) is taken as predicted.
     *
     * @param expectedMs      the decision's saved_prefill_ms
     * @param predictedBlocks the decision's predicted_cached_blocks
     * @param cachedTokens    the outcome's cached_tokens
     * @param blockTokens     tokens per canonical block
     */
    public static double realizedSavingMs(double expectedMs, int predictedBlocks, int cachedTokens, int blockTokens, boolean completed) {
        if (!completed || !(expectedMs > 0)) {
            return 0;
        }
        if (predictedBlocks <= 0) {
            return expectedMs;
        }
        return expectedMs * Math.min(1, (double) (cachedTokens / blockTokens) / predictedBlocks);
    }
}
