package dev.kvrouter.sim.metrics;

import dev.kvrouter.common.LoadStats;
import dev.kvrouter.sim.engine.Completion;

/** What one prefix class (or the whole stream) did under one policy, accumulated request by request. */
public final class ClassStats {

    long arrived;
    long completed;
    long failed;
    long hits;
    long cachedTokens;
    long cachedBlocks;
    long promptBlocks;
    long promptTokens;
    long affinityRouted;
    long stale;
    /** Requests the balancer held while every engine was full, and their time held. */
    long held;
    double heldMsTotal;
    final Quantiles ttftMs = new Quantiles();
    final Quantiles queueMs = new Quantiles();
    /** Requests placed per engine, for the placement Gini. */
    final long[] perEngine;

    ClassStats(int engines) {
        this.perEngine = new long[engines];
    }

    /** @param heldMs how long the balancer held the request before placing it (0: placed as it came) */
    void arrived(int engine, double heldMs) {
        arrived++;
        perEngine[engine]++;
        if (heldMs > 0) {
            held++;
            heldMsTotal += heldMs;
        }
    }

    void completed(Completion c) {
        if (!c.ok()) {
            failed++;
            return;
        }
        completed++;
        promptTokens += c.placement().request().promptTokens();
        promptBlocks += c.placement().chain().length;
        cachedBlocks += c.cachedBlocks();
        cachedTokens += c.cachedTokens();
        if (c.hit()) {
            hits++;
        }
        if (c.placement().forAffinity()) {
            affinityRouted++;
            if (c.stale()) {
                stale++;
            }
        }
        ttftMs.add(c.ttftMs());
        queueMs.add(c.queueMs());
    }

    /** The figures, with dollars at {@code usdPerMillion} per million input tokens. */
    public Summary summary(double usdPerMillion, double loadGini) {
        double perHit = hits == 0 ? 0 : (double) cachedTokens / hits;
        return new Summary(arrived, completed, failed,
                ratio(hits, completed), perHit, perHit * usdPerMillion / 1e6, cachedTokens * usdPerMillion / 1e6,
                ratio(cachedBlocks, promptBlocks), ratio(cachedTokens, promptTokens),
                loadGini, LoadStats.gini(toDoubles(perEngine)),
                affinityRouted, affinityRouted == 0 ? Double.NaN : (double) stale / affinityRouted,
                ttftMs.quantile(0.5), ttftMs.quantile(0.99), queueMs.quantile(0.5), held, held == 0 ? 0 : heldMsTotal / held);
    }

    static double ratio(long a, long b) {
        return b == 0 ? Double.NaN : (double) a / b;
    }

    static double[] toDoubles(long[] v) {
        double[] d = new double[v.length];
        for (int i = 0; i < v.length; i++) {
            d[i] = v[i];
        }
        return d;
    }

    /**
     * @param hitRate           affinity hit rate: completed requests with ≥ 1 cached block / completed requests
     * @param avoidedTokensPerHit cached prompt tokens per hit (recompute avoided)
     * @param blockHitRate      cached blocks / prompt blocks (comparable to the trace's unbounded bound)
     * @param loadGini          engine load Gini sampled over time, averaged (the fleet's; the same for every class)
     * @param placementGini     Gini of this class's requests per engine over the run
     * @param staleness         routed for affinity and found fewer blocks than predicted / routed for affinity (NaN when none)
     */
    public record Summary(long requests, long completed, long failed, double hitRate, double avoidedTokensPerHit, double avoidedUsdPerHit,
                          double avoidedUsdTotal, double blockHitRate, double tokenHitRate, double loadGini, double placementGini,
                          long affinityRouted, double staleness, double ttftP50Ms, double ttftP99Ms, double queueP50Ms,
                          long held, double heldMeanMs) {}
}
