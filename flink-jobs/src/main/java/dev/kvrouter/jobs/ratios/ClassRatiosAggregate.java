package dev.kvrouter.jobs.ratios;

import dev.kvrouter.common.AffinityCost;
import dev.kvrouter.common.LoadStats;
import dev.kvrouter.jobs.policy.RequestOutcomes;
import dev.kvrouter.metrics.ClassRatios;
import dev.kvrouter.metrics.WindowKind;
import org.apache.flink.api.common.functions.AggregateFunction;

/**
 * The four ratios of one prefix class over one window, from joined requests: affinity hit rate,
 * avoided recompute per hit (tokens and dollars), load Gini across engines, staleness ratio, with
 * the counts and TTFT p50/p99. Window bounds and class are filled in by the window function.
 */
public final class ClassRatiosAggregate implements AggregateFunction<JoinedRequest, RatioAccumulator, ClassRatios> {

    private final int blockTokens;
    private final double usdPerMillionInput;

    public ClassRatiosAggregate(int blockTokens, double usdPerMillionInput) {
        this.blockTokens = blockTokens;
        this.usdPerMillionInput = usdPerMillionInput;
    }

    @Override
    public RatioAccumulator createAccumulator() {
        return new RatioAccumulator();
    }

    @Override
    public RatioAccumulator add(JoinedRequest r, RatioAccumulator a) {
        if (r.unmatched == JoinedRequest.DECISION_ONLY) {
            a.unmatchedDecisions++;
            return a;
        }
        if (r.unmatched == JoinedRequest.OUTCOME_ONLY) {
            a.unmatchedOutcomes++;
            return a;
        }
        RequestOutcomes.Classified c = RequestOutcomes.classify(r.predictedCachedBlocks, r.cachedTokens, r.transferredTokens, blockTokens);
        a.requests++;
        if (c.kind() == RequestOutcomes.Kind.HIT) {
            a.hits++;
            a.cachedTokensOfHits += r.cachedTokens;
        } else if (c.kind() == RequestOutcomes.Kind.TRANSFER) {
            a.transfers++;
        }
        if (c.routedForAffinity()) {
            a.affinityRouted++;
            if (c.stale()) {
                a.stale++;
            }
        }
        if (r.bestHolderBlocks != null) {
            a.wouldMatchKnown++;
            if (r.bestHolderBlocks > 0) {
                a.wouldMatch++;
            }
        }
        if (r.savedPrefillMs != null && r.addedWaitMs != null) {
            a.costKnown++;
            a.savedPrefillMs += AffinityCost.realizedSavingMs(r.savedPrefillMs, r.predictedCachedBlocks, r.cachedTokens, blockTokens,
                    r.completed);
            a.addedWaitMs += Math.max(0, r.addedWaitMs);
        }
        a.perEngine.merge(r.engineId, 1L, Long::sum);
        a.ttft.add(r.ttftMs);
        return a;
    }

    @Override
    public ClassRatios getResult(RatioAccumulator a) {
        double avoidedTokensPerHit = a.hits == 0 ? 0 : (double) a.cachedTokensOfHits / a.hits;
        return ClassRatios.newBuilder()
                .setPrefixClass("")
                .setWindowKind(WindowKind.UNKNOWN)
                .setWindowStartMs(0)
                .setWindowEndMs(0)
                .setRequests(a.requests)
                .setAffinityHits(a.hits)
                .setAffinityHitRate(a.requests == 0 ? 0 : (double) a.hits / a.requests)
                .setAvoidedTokensPerHit(avoidedTokensPerHit)
                .setAvoidedUsdPerHit(avoidedTokensPerHit * usdPerMillionInput / 1_000_000)
                .setLoadGini(LoadStats.gini(a.perEngine.values().stream().mapToDouble(Long::doubleValue).toArray()))
                .setAffinityRouted(a.affinityRouted)
                .setStale(a.stale)
                .setStalenessRatio(a.affinityRouted == 0 ? 0 : (double) a.stale / a.affinityRouted)
                .setTtftP50Ms(a.requests == 0 ? null : a.ttft.quantileMs(0.5))
                .setTtftP99Ms(a.requests == 0 ? null : a.ttft.quantileMs(0.99))
                .setUnmatchedDecisions(a.unmatchedDecisions)
                .setUnmatchedOutcomes(a.unmatchedOutcomes)
                .setWouldMatch(a.wouldMatch)
                .setWouldMatchKnown(a.wouldMatchKnown)
                .setCostKnown(a.costKnown)
                .setSavedPrefillMsPerRequest(a.costKnown == 0 ? 0 : a.savedPrefillMs / a.costKnown)
                .setAddedWaitMsPerRequest(a.costKnown == 0 ? 0 : a.addedWaitMs / a.costKnown)
                .build();
    }

    @Override
    public RatioAccumulator merge(RatioAccumulator a, RatioAccumulator b) {
        a.requests += b.requests;
        a.hits += b.hits;
        a.cachedTokensOfHits += b.cachedTokensOfHits;
        a.affinityRouted += b.affinityRouted;
        a.stale += b.stale;
        a.transfers += b.transfers;
        a.unmatchedDecisions += b.unmatchedDecisions;
        a.unmatchedOutcomes += b.unmatchedOutcomes;
        a.wouldMatch += b.wouldMatch;
        a.wouldMatchKnown += b.wouldMatchKnown;
        a.costKnown += b.costKnown;
        a.savedPrefillMs += b.savedPrefillMs;
        a.addedWaitMs += b.addedWaitMs;
        b.perEngine.forEach((e, n) -> a.perEngine.merge(e, n, Long::sum));
        a.ttft.merge(b.ttft);
        return a;
    }
}
