package dev.kvrouter.sim.report;

import dev.kvrouter.sim.SimRunner;
import dev.kvrouter.sim.engine.EngineConfig;
import dev.kvrouter.sim.engine.Failure;
import dev.kvrouter.sim.metrics.ClassStats.Summary;
import dev.kvrouter.sim.metrics.PolicyMetrics;
import dev.kvrouter.sim.metrics.PolicyMetrics.PolicyResult;
import dev.kvrouter.sim.metrics.PolicyMetrics.WindowPoint;
import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/** A run's report: {@code report.md} and PNG charts (JFreeChart, headless) in one folder. */
public final class ReportWriter {

    /** Distinguishable on white (no yellow): one colour per policy, in order. */
    private static final Color[] PALETTE = {new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c), new Color(0xd62728),
        new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2), new Color(0x17becf), new Color(0x7f7f7f)};

    private static final int WIDTH = 900;
    private static final int HEIGHT = 450;

    private ReportWriter() {}

    /**
     * A trace's unbounded-cache prefix hit rate (any router, infinite caches): in the trace's own
     * blocks (the published figure), and in engine blocks (the unit of the block hit rate, the one to compare).
     */
    public record Bound(double traceBlocks, double engineBlocks) {}

    /**
     * @param bounds the stream's unbounded-cache bounds when known (a trace), else null
     * @param command the command line that produced it, for the record
     */
    public static Path write(Path dir, SimRunner.Result result, Bound bounds, String command) {
        Double bound = bounds == null ? null : bounds.engineBlocks();
        System.setProperty("java.awt.headless", "true");
        try {
            Files.createDirectories(dir);
            String chartsMissing = null;
            try {
                charts(dir, result.policies(), bound);
            } catch (RuntimeException | LinkageError | InternalError e) {
                // A JVM without fonts or AWT (a minimal image) cannot draw: the figures still count.
                chartsMissing = e.toString();
            }
            Path md = dir.resolve("report.md");
            Files.writeString(md, markdown(result, bounds, command) + (chartsMissing == null ? ""
                    : "\n(The charts could not be drawn on this JVM: " + chartsMissing + ")\n"));
            Files.writeString(dir.resolve("summary.csv"), csv(result));
            return md;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the report to " + dir, e);
        }
    }

    private static void charts(Path dir, List<PolicyResult> ps, Double bound) throws IOException {
        line(dir.resolve("hit-rate.png"), "Affinity hit rate over time (requests with ≥ 1 cached block)", "hit rate", ps, WindowPoint::hitRate, null);
        line(dir.resolve("block-hit-rate.png"), "Block-level prefix hit rate over time (cached / prompt blocks)", "block hit rate", ps,
                WindowPoint::blockHitRate, bound);
        line(dir.resolve("load-gini.png"), "Load Gini across engines over time (0 even, 1 all on one)", "Gini", ps, WindowPoint::loadGini, null);
        line(dir.resolve("staleness.png"), "Staleness ratio over time (affinity-routed, fewer blocks than predicted)", "staleness", ps,
                WindowPoint::staleness, null);
        line(dir.resolve("ttft-p50.png"), "TTFT p50 over time (ms, log scale)", "TTFT p50 (ms)", ps, WindowPoint::ttftP50Ms, null);
        ratiosBars(dir.resolve("ratios.png"), ps, bound);
        ttftBars(dir.resolve("ttft.png"), ps);
    }

    /** Every policy's figures per class (and {@code all}), one row each, for scripts and for checking the pipeline's ratios. */
    static String csv(SimRunner.Result r) {
        StringBuilder csv = new StringBuilder("policy,class,requests,completed,failed,hits,hit_rate,block_hit_rate,avoided_tokens_per_hit,"
                + "load_gini,affinity_routed,staleness,ttft_p50_ms,ttft_p99_ms,held,held_mean_ms\n");
        for (PolicyResult p : r.policies()) {
            p.perClass().forEach((name, c) -> csv.append(String.format(Locale.ROOT,
                    "%s,%s,%d,%d,%d,%d,%.6f,%.6f,%.1f,%.4f,%d,%.6f,%.1f,%.1f,%d,%.1f%n",
                    p.policy(), name, c.requests(), c.completed(), c.failed(), Math.round(c.hitRate() * c.completed()), c.hitRate(),
                    c.blockHitRate(), c.avoidedTokensPerHit(), c.loadGini(), c.affinityRouted(), c.staleness(), c.ttftP50Ms(), c.ttftP99Ms(),
                    c.held(), c.heldMeanMs())));
        }
        return csv.toString();
    }

    static String markdown(SimRunner.Result r, Bound bound, String command) {
        StringBuilder md = new StringBuilder();
        SimRunner.Settings s = r.settings();
        EngineConfig e = s.engine();
        md.append("# Simulation report: ").append(r.workload()).append("\n\n");
        if (command != null) {
            md.append("```\n").append(command).append("\n```\n\n");
        }
        md.append(String.format(Locale.ROOT, "- %d requests, %d engines per policy, each: %,d KV blocks of %d tokens (%,d tokens), prefill %,.0f tokens/s, "
                        + "decode %,.0f tokens/s per sequence, %d sequences at once; model `%s`%n",
                r.requests(), s.engines(), e.capacityBlocks(), e.blockTokens(), (long) e.capacityBlocks() * e.blockTokens(),
                e.prefillTokensPerS(), e.decodeTokensPerS(), e.maxRunning(), e.model()));
        md.append(String.format(Locale.ROOT, "- failures: %s%n", s.failures().isEmpty() ? "none"
                : String.join(", ", s.failures().stream().map(ReportWriter::describe).toList())));
        md.append(String.format(Locale.ROOT, "- input price $%.2f per million tokens; windows of %.0f s; load sampled every %.0f ms%n",
                s.usdPerMillion(), s.windowMs() / 1000, s.sampleMs()));
        md.append(String.format(Locale.ROOT, "- virtual time %.1f min, computed in %.1f s of wall time%n", r.virtualEndMs() / 60_000, r.wallSeconds()));
        if (bound != null) {
            md.append(String.format(Locale.ROOT, "- **unbounded-cache bound** (infinite caches, any router, consecutive prefix): **%.1f %%** of "
                    + "the prompts' %d-token blocks, the figure to hold the block hit rates against (%.1f %% in the trace's own 512-token blocks, "
                    + "where a partial last block counts whole)%n", bound.engineBlocks() * 100, e.blockTokens(), bound.traceBlocks() * 100));
        }
        md.append("\n## Policies side by side (all requests)\n\n");
        md.append("| policy | hit rate | block hit rate | avoided tokens / hit | avoided $ / hit | avoided $ total | load Gini | staleness "
                + "| TTFT p50 ms | TTFT p99 ms | queue p50 ms | throughput req/s | failed |\n");
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (PolicyResult p : r.policies()) {
            Summary a = p.overall();
            md.append(String.format(Locale.ROOT, "| %s | %s | %s | %,.0f | %.6f | %.2f | %.3f | %s | %,.0f | %,.0f | %,.0f | %.2f | %d |%n",
                    p.policy(), pct(a.hitRate()), pct(a.blockHitRate()), a.avoidedTokensPerHit(), a.avoidedUsdPerHit(), a.avoidedUsdTotal(),
                    a.loadGini(), pct(a.staleness()), a.ttftP50Ms(), a.ttftP99Ms(), a.queueP50Ms(), p.throughput(), a.failed()));
        }
        for (PolicyResult p : r.policies()) {
            Summary a = p.overall();
            if (a.held() > 0) {
                md.append(String.format(Locale.ROOT, "%n%s: %,d requests held by their balancer while every engine was full, %,.0f ms "
                        + "on average (in their TTFT and queue time).%n", p.policy(), a.held(), a.heldMeanMs()));
            }
        }
        Set<String> classes = new TreeSet<>();
        r.policies().forEach(p -> classes.addAll(p.perClass().keySet()));
        classes.remove(PolicyMetrics.ALL);
        if (classes.size() > 1 || (bound == null && !classes.isEmpty())) {
            md.append("\n## Per class\n\n");
            md.append("| class | policy | requests | hit rate | block hit rate | avoided tokens / hit | placement Gini | affinity-routed | staleness "
                    + "| TTFT p50 ms | TTFT p99 ms |\n");
            md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            for (String c : classes) {
                for (PolicyResult p : r.policies()) {
                    Summary a = p.perClass().get(c);
                    if (a == null) {
                        continue;
                    }
                    md.append(String.format(Locale.ROOT, "| %s | %s | %d | %s | %s | %,.0f | %.3f | %d | %s | %,.0f | %,.0f |%n",
                            c, p.policy(), a.requests(), pct(a.hitRate()), pct(a.blockHitRate()), a.avoidedTokensPerHit(), a.placementGini(),
                            a.affinityRouted(), pct(a.staleness()), a.ttftP50Ms(), a.ttftP99Ms()));
                }
            }
        }
        md.append("\n## Charts\n\n");
        for (String png : List.of("ratios", "ttft", "hit-rate", "block-hit-rate", "load-gini", "staleness", "ttft-p50")) {
            md.append("![").append(png).append("](").append(png).append(".png)\n\n");
        }
        md.append("""
                ## How to read it

                - **hit rate**: requests that found at least one prompt block cached on the engine when it
                  scheduled them, over completed requests. A shared system prompt makes it near 1 for every
                  policy; the block hit rate tells policies apart.
                - **block hit rate**: cached prompt blocks over prompt blocks: the share of prefill skipped.
                  Comparable to the trace's unbounded bound; no router can beat the bound, finite caches land below.
                - **avoided tokens / $ per hit**: prompt tokens not recomputed per hit, and at the input price.
                - **load Gini**: requests waiting + running per live engine, sampled and averaged (0 even, 1 all
                  on one engine). Placement Gini (per class): the class's requests per engine over the run.
                - **staleness**: of the requests a policy routed for affinity (it predicted cached blocks there),
                  the share that found fewer blocks than predicted. n/a: the policy never predicts (no affinity,
                  or consistent hashing, which routes by key and predicts nothing).
                - **TTFT**: arrival to the end of prefill, modeled: FIFO queue for a sequence slot and KV room,
                  prefills one after another at the prefill rate with cached tokens skipped; a request its
                  balancer held (the view with holding on, every engine full) counts from its arrival there.
                - **throughput**: completed requests per second, first arrival to last completion: below the
                  arrival rate when a policy overloads engines (the run lasts longer).
                - failed: requests on an engine that died or restarted (all policies meet the same failures).
                """);
        return md.toString();
    }

    private static String describe(Failure f) {
        return switch (f.kind()) {
            case KILL -> String.format(Locale.ROOT, "engine %d dies at %.0f s", f.engine(), f.atS());
            case RESTART -> String.format(Locale.ROOT, "engine %d restarts at %.0f s (down %.0f s)", f.engine(), f.atS(), f.durationS());
            case SLOW -> String.format(Locale.ROOT, "engine %d prefills at %.2f× from %.0f s for %.0f s", f.engine(), f.factor(), f.atS(), f.durationS());
            case GAP -> String.format(Locale.ROOT, "engine %d loses %d KV event batches at %.0f s", f.engine(), f.batches(), f.atS());
        };
    }

    /** A ratio as a percentage with one decimal, n/a for NaN. */
    public static String pct(double v) {
        return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%.1f %%", v * 100);
    }

    private static void line(Path png, String title, String yLabel, List<PolicyResult> ps, ToDoubleFunction<WindowPoint> f, Double bound)
            throws IOException {
        XYSeriesCollection data = new XYSeriesCollection();
        boolean log = yLabel.startsWith("TTFT");
        for (PolicyResult p : ps) {
            XYSeries s = new XYSeries(p.policy());
            for (WindowPoint w : p.series()) {
                double v = f.applyAsDouble(w);
                if (!Double.isNaN(v) && (!log || v > 0)) {
                    s.add(w.startS() / 60, v);
                }
            }
            data.addSeries(s);
        }
        JFreeChart chart = ChartFactory.createXYLineChart(title, "virtual time (min)", yLabel, data, PlotOrientation.VERTICAL, true, false, false);
        XYPlot plot = chart.getXYPlot();
        style(chart);
        if (log) {
            LogAxis axis = new LogAxis(yLabel);
            axis.setSmallestValue(1);
            plot.setRangeAxis(axis);
        }
        if (bound != null) {
            // A marker does not widen the axis: make room for the bound above the data.
            double top = Math.max(bound, data.getSeriesCount() == 0 ? 0 : data.getRangeUpperBound(false));
            plot.getRangeAxis().setRange(0, top * 1.08);
            ValueMarker m = new ValueMarker(bound, Color.GRAY, new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10, new float[] {6, 4}, 0));
            m.setLabel(String.format(Locale.ROOT, "unbounded bound %.1f %%", bound * 100));
            m.setLabelAnchor(org.jfree.chart.ui.RectangleAnchor.TOP_RIGHT);
            m.setLabelTextAnchor(org.jfree.chart.ui.TextAnchor.BOTTOM_RIGHT);
            plot.addRangeMarker(m);
        }
        for (int i = 0; i < ps.size(); i++) {
            plot.getRenderer().setSeriesStroke(i, new BasicStroke(2f));
            plot.getRenderer().setSeriesPaint(i, PALETTE[i % PALETTE.length]);
        }
        ChartUtils.saveChartAsPNG(png.toFile(), chart, WIDTH, HEIGHT);
    }

    private static void ratiosBars(Path png, List<PolicyResult> ps, Double bound) throws IOException {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        for (PolicyResult p : ps) {
            Summary a = p.overall();
            data.addValue(nanToZero(a.hitRate()), "hit rate", p.policy());
            data.addValue(nanToZero(a.blockHitRate()), "block hit rate", p.policy());
            data.addValue(nanToZero(a.loadGini()), "load Gini", p.policy());
            data.addValue(nanToZero(a.staleness()), "staleness", p.policy());
        }
        JFreeChart chart = ChartFactory.createBarChart("The ratios, policies side by side", "policy", "ratio", data);
        style(chart);
        chart.getCategoryPlot().getDomainAxis().setMaximumCategoryLabelLines(2);
        CategoryPlot plot = chart.getCategoryPlot();
        if (bound != null) {
            double top = Math.max(bound, org.jfree.data.general.DatasetUtils.findMaximumRangeValue(data) == null ? 0
                    : org.jfree.data.general.DatasetUtils.findMaximumRangeValue(data).doubleValue());
            plot.getRangeAxis().setRange(0, top * 1.08);
            ValueMarker m = new ValueMarker(bound, Color.GRAY, new BasicStroke(1.5f));
            m.setLabel(String.format(Locale.ROOT, "unbounded block hit rate %.1f %%", bound * 100));
            m.setLabelAnchor(org.jfree.chart.ui.RectangleAnchor.TOP_RIGHT);
            m.setLabelTextAnchor(org.jfree.chart.ui.TextAnchor.BOTTOM_RIGHT);
            plot.addRangeMarker(m);
        }
        ChartUtils.saveChartAsPNG(png.toFile(), chart, WIDTH, HEIGHT);
    }

    private static void ttftBars(Path png, List<PolicyResult> ps) throws IOException {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        for (PolicyResult p : ps) {
            data.addValue(Math.max(1, nanToZero(p.overall().ttftP50Ms())), "TTFT p50", p.policy());
            data.addValue(Math.max(1, nanToZero(p.overall().ttftP99Ms())), "TTFT p99", p.policy());
        }
        JFreeChart chart = ChartFactory.createBarChart("TTFT by policy (ms, log scale)", "policy", "ms", data);
        style(chart);
        chart.getCategoryPlot().getDomainAxis().setMaximumCategoryLabelLines(2);
        LogAxis axis = new LogAxis("ms");
        axis.setSmallestValue(1);
        chart.getCategoryPlot().setRangeAxis(axis);
        ChartUtils.saveChartAsPNG(png.toFile(), chart, WIDTH, HEIGHT);
    }

    private static void style(JFreeChart chart) {
        chart.setBackgroundPaint(Color.WHITE);
        chart.getPlot().setBackgroundPaint(new Color(248, 248, 248));
        if (chart.getPlot() instanceof CategoryPlot plot) {
            for (int i = 0; i < PALETTE.length; i++) {
                plot.getRenderer().setSeriesPaint(i, PALETTE[i]);
            }
        }
    }

    private static double nanToZero(double v) {
        return Double.isNaN(v) ? 0 : v;
    }
}
