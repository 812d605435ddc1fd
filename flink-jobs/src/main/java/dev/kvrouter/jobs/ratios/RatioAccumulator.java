package dev.kvrouter.jobs.ratios;

import dev.kvrouter.jobs.policy.LatencyHistogram;
import java.util.HashMap;
import java.util.Map;

/** What a window of one prefix class has counted so far. A POJO: Flink keeps it without Kryo. */
public class RatioAccumulator {
    public long requests;
    public long hits;
    public long cachedTokensOfHits;
    public long affinityRouted;
    public long stale;
    public long transfers;
    public long unmatchedDecisions;
    public long unmatchedOutcomes;
    /** Requests whose best holder matched a block (what affinity would hit), of those whose decision said (known). */
    public long wouldMatch;
    public long wouldMatchKnown;
    /** Requests whose decision carried the cost view, what their placements saved (as the engines showed it) and the wait they added. */
    public long costKnown;
    public double savedPrefillMs;
    public double addedWaitMs;
    /** Requests per engine, for the load Gini; at most one entry per engine of the fleet. */
    public Map<String, Long> perEngine = new HashMap<>();
    public LatencyHistogram ttft = new LatencyHistogram();

    public RatioAccumulator() {}
}
