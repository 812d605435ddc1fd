package dev.kvrouter.sim.metrics;

import dev.kvrouter.common.LoadStats;
import dev.kvrouter.sim.engine.Completion;
import dev.kvrouter.sim.engine.Placement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One policy's figures: per class and overall, and per time window (by arrival) for the charts.
 * The load Gini is sampled across live engines every sample interval and averaged.
 */
public final class PolicyMetrics {

    public static final String ALL = "all";

    private final String policy;
    private final int engines;
    private final double windowMs;
    private final Map<String, ClassStats> classes = new TreeMap<>();
    private final ClassStats all;
    private final TreeMap<Integer, Window> windows = new TreeMap<>();
    private double giniSum;
    private long giniSamples;
    private double firstArrivalMs = Double.NaN;
    private double lastFinishMs;

    /** One window's counts. */
    static final class Window {
        long completed;
        long hits;
        long cachedBlocks;
        long promptBlocks;
        long affinityRouted;
        long stale;
        double giniSum;
        long giniSamples;
        final Quantiles ttft = new Quantiles();
    }

    public PolicyMetrics(String policy, int engines, double windowMs) {
        this.policy = policy;
        this.engines = engines;
        this.windowMs = windowMs;
        this.all = new ClassStats(engines);
    }

    public String policy() {
        return policy;
    }

    public void arrived(Placement p, int engine) {
        if (Double.isNaN(firstArrivalMs)) {
            firstArrivalMs = p.request().arrivalMs();
        }
        all.arrived(engine, p.heldMs());
        classes.computeIfAbsent(label(p), k -> new ClassStats(engines)).arrived(engine, p.heldMs());
    }

    public void completed(Completion c) {
        all.completed(c);
        classes.computeIfAbsent(label(c.placement()), k -> new ClassStats(engines)).completed(c);
        lastFinishMs = Math.max(lastFinishMs, c.finishedAtMs());
        if (!c.ok()) {
            return;
        }
        Window w = window(c.placement().request().arrivalMs());
        w.completed++;
        w.hits += c.hit() ? 1 : 0;
        w.cachedBlocks += c.cachedBlocks();
        w.promptBlocks += c.placement().chain().length;
        if (c.placement().forAffinity()) {
            w.affinityRouted++;
            w.stale += c.stale() ? 1 : 0;
        }
        w.ttft.add(c.ttftMs());
    }

    /** One sample of the live engines' loads. */
    public void sampleLoads(double atMs, double[] liveLoads) {
        double g = LoadStats.gini(liveLoads);
        giniSum += g;
        giniSamples++;
        Window w = window(atMs);
        w.giniSum += g;
        w.giniSamples++;
    }

    private Window window(double atMs) {
        return windows.computeIfAbsent((int) (atMs / windowMs), k -> new Window());
    }

    private static String label(Placement p) {
        String c = p.request().requestClass();
        return c == null ? "unlabelled" : c;
    }

    public PolicyResult result(double usdPerMillion) {
        double gini = giniSamples == 0 ? 0 : giniSum / giniSamples;
        Map<String, ClassStats.Summary> perClass = new TreeMap<>();
        perClass.put(ALL, all.summary(usdPerMillion, gini));
        classes.forEach((name, s) -> perClass.put(name, s.summary(usdPerMillion, gini)));
        List<WindowPoint> series = new ArrayList<>();
        windows.forEach((k, w) -> series.add(new WindowPoint(k * windowMs / 1000,
                ClassStats.ratio(w.hits, w.completed), ClassStats.ratio(w.cachedBlocks, w.promptBlocks),
                w.giniSamples == 0 ? Double.NaN : w.giniSum / w.giniSamples,
                ClassStats.ratio(w.stale, w.affinityRouted), w.ttft.quantile(0.5), w.completed)));
        double spanMs = lastFinishMs - (Double.isNaN(firstArrivalMs) ? 0 : firstArrivalMs);
        double throughput = spanMs <= 0 ? 0 : all.completed * 1000.0 / spanMs;
        return new PolicyResult(policy, perClass, series, throughput, spanMs);
    }

    /** One window of the charts: figures of the requests that arrived in it. */
    public record WindowPoint(double startS, double hitRate, double blockHitRate, double loadGini, double staleness, double ttftP50Ms, long completed) {}

    /**
     * @param throughput completed requests per second, first arrival to last completion
     */
    public record PolicyResult(String policy, Map<String, ClassStats.Summary> perClass, List<WindowPoint> series, double throughput, double spanMs) {
        public ClassStats.Summary overall() {
            return perClass.get(ALL);
        }
    }
}
