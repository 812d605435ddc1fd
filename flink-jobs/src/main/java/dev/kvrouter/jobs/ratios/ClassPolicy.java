package dev.kvrouter.jobs.ratios;

import dev.kvrouter.alerts.AlertKind;
import dev.kvrouter.jobs.alerts.AlertObservation;
import dev.kvrouter.jobs.policy.AffinitySwitch;
import dev.kvrouter.metrics.ClassRatios;
import dev.kvrouter.metrics.WindowKind;
import dev.kvrouter.redis.ViewWrite;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Affinity on or off per prefix class, from each tumbling window with hysteresis
 * ({@link AffinitySwitch}), published to the view's {@code classes} hash for {@code kvr_pick}. A
 * class that pays no longer (the one-shot class) stops paying for affinity; while it is off, every
 * pick still reports what the best holder matched, and the class gets affinity back as soon as that
 * shows its prefixes are reused (the evidence is never starved by the switch itself).
 */
public final class ClassPolicy extends KeyedProcessFunction<String, ClassRatios, ViewWrite> {

    /** Affinity turned off (breached) or back on, for the alert rules. */
    public static final OutputTag<AlertObservation> AFFINITY = new OutputTag<>("affinity") {};

    /**
     * Classes whose latest ratios are exported as gauges ({@code class_kvr_*{class}}), at most this
     * many per instance: class labels come from balancers, and a metric's label values must stay
     * few. Further classes are in the ratios topic and the view's ratios key only.
     */
    static final int MAX_EXPORTED_CLASSES = 32;

    private final AffinitySwitch affinity;
    private transient ValueState<Boolean> on;
    /** The exported classes' latest tumbling window and affinity switch; in memory, refilled by the next windows after a restart. */
    private transient Map<String, Exported> exported;

    private record Exported(ClassRatios ratios, boolean affinityOn) {}

    public ClassPolicy(AffinitySwitch affinity) {
        this.affinity = affinity;
    }

    @Override
    public void open(OpenContext openContext) {
        ValueStateDescriptor<Boolean> descriptor = new ValueStateDescriptor<>("affinity-on", Types.BOOLEAN);
        // Class labels come from balancers, so their number is not ours to bound: a class not seen
        // for a day is forgotten (and starts again with affinity on).
        descriptor.enableTimeToLive(StateTtlConfig.newBuilder(Duration.ofDays(1)).build());
        on = getRuntimeContext().getState(descriptor);
        exported = new ConcurrentHashMap<>(); // the reporter's thread reads it
    }

    @Override
    public void processElement(ClassRatios r, Context ctx, Collector<ViewWrite> out) throws Exception {
        if (r.getWindowKind() != WindowKind.TUMBLING) {
            return;
        }
        boolean before = on.value() == null || on.value();
        AffinitySwitch.Window w = new AffinitySwitch.Window(r.getRequests(), r.getAffinityHits(), r.getWouldMatch(), r.getWouldMatchKnown());
        boolean after = affinity.next(before, w);
        on.update(after);
        double rate = affinity.evidence(before, w);
        String why = before ? String.format(java.util.Locale.ROOT, "hit rate %.1f %%", 100 * rate)
                : String.format(java.util.Locale.ROOT, "best holder matched %.1f %% of its requests", 100 * rate);
        ctx.output(AFFINITY, new AlertObservation(AlertKind.AFFINITY_NOT_PAYING, r.getPrefixClass(), rate, affinity.offBelow(), !after,
                "class " + r.getPrefixClass() + (after ? " pays for affinity (" + why + ")" : " gains too little from affinity ("
                        + why + "): affinity off"), r.getWindowEndMs()));
        // Written every window, not only on change: the hash's TTL is refreshed with the view's.
        out.collect(ViewWrite.classPolicy(r.getPrefixClass(), after ? "on" : "off", r.getWindowEndMs()));
        export(r, after);
    }

    /** The class's ratios as gauges, registered on its first window (within {@link #MAX_EXPORTED_CLASSES}). */
    private void export(ClassRatios r, boolean affinityOn) {
        String c = r.getPrefixClass();
        if (!exported.containsKey(c) && exported.size() >= MAX_EXPORTED_CLASSES) {
            return;
        }
        // The value goes in before a new class's gauges: a scrape may read them at once.
        if (exported.put(c, new Exported(r, affinityOn)) == null) {
            MetricGroup g = getRuntimeContext().getMetricGroup().addGroup("class", c);
            g.gauge("kvr_requests", () -> exported.get(c).ratios().getRequests());
            g.gauge("kvr_affinity_hit_ratio", () -> exported.get(c).ratios().getAffinityHitRate());
            g.gauge("kvr_avoided_tokens_per_hit", () -> exported.get(c).ratios().getAvoidedTokensPerHit());
            g.gauge("kvr_avoided_usd_per_hit", () -> exported.get(c).ratios().getAvoidedUsdPerHit());
            g.gauge("kvr_load_gini", () -> exported.get(c).ratios().getLoadGini());
            g.gauge("kvr_staleness_ratio", () -> exported.get(c).ratios().getStalenessRatio());
            g.gauge("kvr_ttft_p50_ms", () -> exported.get(c).ratios().getTtftP50Ms());
            g.gauge("kvr_ttft_p99_ms", () -> exported.get(c).ratios().getTtftP99Ms());
            g.gauge("kvr_affinity_on", () -> exported.get(c).affinityOn() ? 1 : 0);
        }
    }
}
