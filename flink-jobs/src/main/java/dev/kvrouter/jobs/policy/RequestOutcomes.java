package dev.kvrouter.jobs.policy;

/**
 * How a request went, from its routing decision and its outcome: the hit, stale, transfer and
 * cold counts behind the ratios.
 */
public final class RequestOutcomes {

    public enum Kind { HIT, TRANSFER, COLD }

    /**
     * @param kind  HIT when at least one block of the prompt was cached on arrival; else TRANSFER when
     *              KV was moved in; else COLD
     * @param stale routed for affinity (predicted cached blocks > 0) and fewer blocks were there
     */
    public record Classified(Kind kind, boolean routedForAffinity, boolean stale, long cachedBlocks) {}

    private RequestOutcomes() {}

    public static Classified classify(int predictedCachedBlocks, int cachedTokens, int transferredTokens, int blockTokens) {
        if (blockTokens < 1) {
            throw new IllegalArgumentException("block size must be at least one token, was " + blockTokens);
        }
        long cachedBlocks = Math.max(0, cachedTokens) / blockTokens;
        Kind kind = cachedBlocks >= 1 ? Kind.HIT : transferredTokens > 0 ? Kind.TRANSFER : Kind.COLD;
        boolean forAffinity = predictedCachedBlocks > 0;
        return new Classified(kind, forAffinity, forAffinity && cachedBlocks < predictedCachedBlocks, cachedBlocks);
    }
}
