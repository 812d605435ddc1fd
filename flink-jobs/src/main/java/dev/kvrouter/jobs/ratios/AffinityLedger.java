package dev.kvrouter.jobs.ratios;

import dev.kvrouter.alerts.AlertKind;
import dev.kvrouter.jobs.alerts.AlertObservation;
import dev.kvrouter.jobs.policy.AffinityPayoff;
import dev.kvrouter.metrics.ClassRatios;
import dev.kvrouter.metrics.WindowKind;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Per prefix class, each tumbling window: what affinity saved against the wait it added
 * ({@link AffinityPayoff}), as gauges and as {@code AFFINITY_NOT_PAYING} observations for the alert
 * rules. It decides nothing: {@code kvr_pick} prices every request by the same saving and wait, so a
 * class's affinity is never switched off, and balancers that publish no decisions or outcomes leave
 * nothing here to judge and affinity as it is — on. (Jobs before this one switched a class off on
 * its hit rate, which flipped on the first windows' timing; see the README's class policy.)
 */
public final class AffinityLedger extends KeyedProcessFunction<String, ClassRatios, AlertObservation> {

    /**
     * Classes whose latest ratios are exported as gauges ({@code class_kvr_*{class}}), at most this
     * many per instance: class labels come from balancers, and a metric's label values must stay
     * few. Further classes are in the ratios topic and the view's ratios key only.
     */
    static final int MAX_EXPORTED_CLASSES = 32;

    private final AffinityPayoff payoff;
    /**
     * The affinity switch older jobs kept per class (same operator uid): restored from their
     * savepoints, read by nobody. Cleared on the class's next window; its day-long TTL takes the rest.
     */
    private transient ValueState<Boolean> legacySwitch;
    /** The exported classes' latest tumbling window and whether affinity paid in it; in memory, refilled by the next windows after a restart. */
    private transient Map<String, Exported> exported;

    private record Exported(ClassRatios ratios, Boolean paid) {}

    public AffinityLedger(AffinityPayoff payoff) {
        this.payoff = payoff;
    }

    @Override
    public void open(OpenContext openContext) {
        ValueStateDescriptor<Boolean> descriptor = new ValueStateDescriptor<>("affinity-on", Types.BOOLEAN);
        descriptor.enableTimeToLive(StateTtlConfig.newBuilder(Duration.ofDays(1)).build());
        legacySwitch = getRuntimeContext().getState(descriptor);
        exported = new ConcurrentHashMap<>(); // the reporter's thread reads it
        // How many classes this instance has judged: 0 while balancers publish no decisions or outcomes
        // (or no cost view) — nothing judged, and affinity on, as it needs no evidence to be.
        getRuntimeContext().getMetricGroup().gauge("kvr_affinity_classes_judged",
                () -> exported.values().stream().filter(e -> e.paid() != null).count());
    }

    @Override
    public void processElement(ClassRatios r, Context ctx, Collector<AlertObservation> out) throws Exception {
        if (r.getWindowKind() != WindowKind.TUMBLING) {
            return;
        }
        // State clearing: an older job's switch for this class has no reader any more.
        legacySwitch.clear();
        double saved = r.getSavedPrefillMsPerRequest();
        double added = r.getAddedWaitMsPerRequest();
        double weighed = payoff.uncachedPrefillWeight() * saved;
        Optional<Boolean> paid = payoff.paid(new AffinityPayoff.Window(r.getCostKnown(), saved, added));
        paid.ifPresent(p -> out.collect(new AlertObservation(AlertKind.AFFINITY_NOT_PAYING, r.getPrefixClass(), added, weighed, !p,
                String.format(Locale.ROOT, "class %s: its placements added %.0f ms of wait per request against %.0f ms of prefill they "
                        + "saved (x %s as the pick weighs it: %.0f ms; %d requests)%s", r.getPrefixClass(), added, saved,
                        trim(payoff.uncachedPrefillWeight()), weighed, r.getCostKnown(), p ? ""
                                : ": affinity did not pay, the view promised blocks the engines did not have (see the staleness ratio)"),
                r.getWindowEndMs())));
        export(r, paid.orElse(null));
    }

    /**
     * The class's ratios as gauges, registered on its first window (within {@link #MAX_EXPORTED_CLASSES});
     * whether affinity paid is that of the last window large enough to judge (1 until one is: nothing
     * said against it).
     */
    private void export(ClassRatios r, Boolean paid) {
        String c = r.getPrefixClass();
        if (!exported.containsKey(c) && exported.size() >= MAX_EXPORTED_CLASSES) {
            return;
        }
        Exported before = exported.get(c);
        Boolean judged = paid != null ? paid : before != null ? before.paid() : null;
        // The value goes in before a new class's gauges: a scrape may read them at once.
        if (exported.put(c, new Exported(r, judged)) == null) {
            MetricGroup g = getRuntimeContext().getMetricGroup().addGroup("class", c);
            g.gauge("kvr_requests", () -> exported.get(c).ratios().getRequests());
            g.gauge("kvr_affinity_hit_ratio", () -> exported.get(c).ratios().getAffinityHitRate());
            g.gauge("kvr_avoided_tokens_per_hit", () -> exported.get(c).ratios().getAvoidedTokensPerHit());
            g.gauge("kvr_avoided_usd_per_hit", () -> exported.get(c).ratios().getAvoidedUsdPerHit());
            g.gauge("kvr_load_gini", () -> exported.get(c).ratios().getLoadGini());
            g.gauge("kvr_staleness_ratio", () -> exported.get(c).ratios().getStalenessRatio());
            g.gauge("kvr_ttft_p50_ms", () -> exported.get(c).ratios().getTtftP50Ms());
            g.gauge("kvr_ttft_p99_ms", () -> exported.get(c).ratios().getTtftP99Ms());
            g.gauge("kvr_affinity_saved_ms_per_request", () -> exported.get(c).ratios().getSavedPrefillMsPerRequest());
            g.gauge("kvr_affinity_added_wait_ms_per_request", () -> exported.get(c).ratios().getAddedWaitMsPerRequest());
            g.gauge("kvr_affinity_paid", () -> Boolean.FALSE.equals(exported.get(c).paid()) ? 0 : 1);
        }
    }

    private static String trim(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}
