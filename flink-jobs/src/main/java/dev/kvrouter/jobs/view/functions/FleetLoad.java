package dev.kvrouter.jobs.view.functions;

import dev.kvrouter.alerts.AlertKind;
import dev.kvrouter.common.LoadStats;
import dev.kvrouter.events.EngineHealth;
import dev.kvrouter.jobs.alerts.AlertObservation;
import dev.kvrouter.jobs.view.model.EngineStatus;
import dev.kvrouter.redis.ViewWrite;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Fleet-wide load, on one key: each live engine's load score (waiting + running), and every
 * interval the fleet mean, the load Gini and the hot engines (load above k x mean) into the view's
 * meta key, for balancers and dashboards.
 */
public final class FleetLoad extends KeyedProcessFunction<String, EngineStatus, ViewWrite> {

    /** The one key all engine statuses go to. */
    public static final String FLEET = "fleet";
    /** Hot engines becoming hot or cooling down, for the alert rules. */
    public static final OutputTag<AlertObservation> HOT_ENGINES = new OutputTag<>("hot-engines") {};

    private final long intervalMs;
    private final double busyFactor;
    private transient MapState<String, Double> loads;
    private transient ValueState<Long> nextTick;
    /** Hot at the last tick; in memory only: after a restart every hot engine is reported again. */
    private transient java.util.Set<String> lastHot;
    /** Each live engine's last health, for the engines-by-health gauges; in memory, refilled by the next statuses after a restart. */
    private transient Map<String, EngineHealth> healthOf;

    public FleetLoad(long intervalMs, double busyFactor) {
        this.intervalMs = intervalMs;
        this.busyFactor = busyFactor;
    }

    @Override
    public void open(OpenContext openContext) {
        loads = getRuntimeContext().getMapState(new MapStateDescriptor<>("engine-loads", Types.STRING, Types.DOUBLE));
        nextTick = getRuntimeContext().getState(new ValueStateDescriptor<>("next-tick", Types.LONG));
        lastHot = new java.util.HashSet<>();
        healthOf = new java.util.concurrent.ConcurrentHashMap<>(); // the reporter's thread reads it
        // kvr_engines{health=...}: the engines this subtask knows by their last status, dead ones
        // left out (they leave the fleet). Only the fleet key's subtask has any: sum over subtasks.
        for (EngineHealth health : EngineHealth.values()) {
            if (health != EngineHealth.DEAD) {
                getRuntimeContext().getMetricGroup().addGroup("health", health.name())
                        .gauge("kvr_engines", () -> healthOf.values().stream().filter(health::equals).count());
            }
        }
    }

    @Override
    public void processElement(EngineStatus s, Context ctx, Collector<ViewWrite> out) throws Exception {
        if (s.currentHealth == EngineHealth.DEAD || s.currentHealth == EngineHealth.RESTARTED) {
            // State clearing: a dead engine has no load; it comes back with its next report.
            loads.remove(s.engine);
        } else {
            loads.put(s.engine, (double) (s.waiting + s.running));
        }
        if (s.currentHealth == EngineHealth.DEAD) {
            healthOf.remove(s.engine);
        } else if (s.currentHealth != null) {
            healthOf.put(s.engine, s.currentHealth);
        }
        if (nextTick.value() == null) {
            long at = ctx.timerService().currentProcessingTime() + intervalMs;
            ctx.timerService().registerProcessingTimeTimer(at);
            nextTick.update(at);
        }
    }

    // Timer path: publish, then tick again only while some engine is known; an empty fleet keeps
    // no state and no timer.
    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<ViewWrite> out) throws Exception {
        Map<String, Double> current = new TreeMap<>();
        for (Map.Entry<String, Double> e : loads.entries()) {
            current.put(e.getKey(), e.getValue());
        }
        double[] values = current.values().stream().mapToDouble(Double::doubleValue).toArray();
        out.collect(ViewWrite.meta("fleet_engines", Integer.toString(values.length), timestamp));
        out.collect(ViewWrite.meta("fleet_mean_load", String.format("%.3f", LoadStats.mean(values)), timestamp));
        out.collect(ViewWrite.meta("load_gini", String.format("%.4f", LoadStats.gini(values)), timestamp));
        java.util.List<String> hot = LoadStats.hot(current, busyFactor);
        out.collect(ViewWrite.meta("hot_engines", String.join(",", hot), timestamp));
        double mean = LoadStats.mean(values);
        double hotAbove = LoadStats.hotAbove(mean, busyFactor);
        for (String engine : hot) {
            if (lastHot.add(engine)) {
                ctx.output(HOT_ENGINES, new AlertObservation(AlertKind.HOT_ENGINE, engine, current.get(engine), hotAbove, true,
                        "engine " + engine + " has load " + current.get(engine) + ", over " + busyFactor + " x the fleet mean "
                                + String.format(java.util.Locale.ROOT, "%.1f", mean), timestamp));
            }
        }
        for (java.util.Iterator<String> it = lastHot.iterator(); it.hasNext(); ) {
            String engine = it.next();
            if (!hot.contains(engine)) {
                it.remove();
                ctx.output(HOT_ENGINES, new AlertObservation(AlertKind.HOT_ENGINE, engine, current.getOrDefault(engine, 0.0),
                        hotAbove, false, "engine " + engine + " is no longer hot", timestamp));
            }
        }
        if (current.isEmpty()) {
            nextTick.clear();
            return;
        }
        long at = timestamp + intervalMs;
        ctx.timerService().registerProcessingTimeTimer(at);
        nextTick.update(at);
    }
}
