package dev.kvrouter.httpfleet;

import dev.kvrouter.common.LoadStats;
import dev.kvrouter.sim.metrics.Quantiles;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a load run's clients saw, per prefix class and over all requests: requests, answered, failed,
 * time to first token (p50, p99, of answered requests), the share of prompt tokens the engines
 * reported cached (the block hit as clients can measure it), and the load Gini over the upstreams
 * that answered (by request count; empty when the balancer names none).
 */
public record LoadSummary(String requestClass, int requests, int answered, int failed, double ttftP50Ms, double ttftP99Ms,
                          double cachedShare, double upstreamGini) {

    public static final String ALL = "all";
    static final String CSV_HEADER = "class,requests,answered,failed,ttft_p50_ms,ttft_p99_ms,cached_share,upstream_gini";

    /** One row for all requests, then one per class in name order. */
    public static List<LoadSummary> of(List<LoadGenerator.Result> results) {
        Map<String, List<LoadGenerator.Result>> byClass = new TreeMap<>();
        for (LoadGenerator.Result r : results) {
            byClass.computeIfAbsent(r.requestClass() == null || r.requestClass().isEmpty() ? "-" : r.requestClass(), c -> new ArrayList<>()).add(r);
        }
        List<LoadSummary> rows = new ArrayList<>();
        rows.add(row(ALL, results));
        byClass.forEach((c, rs) -> rows.add(row(c, rs)));
        return rows;
    }

    private static LoadSummary row(String requestClass, List<LoadGenerator.Result> results) {
        Quantiles ttft = new Quantiles();
        long prompt = 0;
        long cached = 0;
        int failed = 0;
        Map<String, Integer> perUpstream = new LinkedHashMap<>();
        for (LoadGenerator.Result r : results) {
            if (!r.ok()) {
                failed++;
                continue;
            }
            ttft.add(r.ttftMs());
            if (r.cachedTokens() >= 0) {
                prompt += r.promptTokens();
                cached += r.cachedTokens();
            }
            if (!r.answeredBy().isEmpty()) {
                perUpstream.merge(r.answeredBy(), 1, Integer::sum);
            }
        }
        double gini = perUpstream.isEmpty() ? Double.NaN : LoadStats.gini(perUpstream.values().stream().mapToDouble(Integer::doubleValue).toArray());
        return new LoadSummary(requestClass, results.size(), results.size() - failed, failed, ttft.quantile(0.5), ttft.quantile(0.99),
                prompt == 0 ? Double.NaN : (double) cached / prompt, gini);
    }

    String csv() {
        return String.format(Locale.ROOT, "%s,%d,%d,%d,%.1f,%.1f,%.6f,%.4f", requestClass, requests, answered, failed, ttftP50Ms, ttftP99Ms,
                cachedShare, upstreamGini);
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%-14s %7d requests, %7d answered, %5d failed; TTFT p50 %8.1f ms, p99 %8.1f ms; cached %5.1f %%; "
                + "upstream Gini %.3f", requestClass, requests, answered, failed, ttftP50Ms, ttftP99Ms, cachedShare * 100, upstreamGini);
    }
}
