package dev.kvrouter.jobs.view.functions;

import dev.kvrouter.events.EngineHealth;
import dev.kvrouter.jobs.io.LocationUpdate;
import dev.kvrouter.jobs.view.model.EngineEpoch;
import dev.kvrouter.jobs.view.model.EngineStatus;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Stamps confirmations (a completed request found these blocks cached on its engine) with what the
 * prefix-location table needs to record them: the engine's cache epoch and an entry's lifetime
 * there, both from the engine's statuses. Keyed by engine.
 *
 * <p>A confirmation can put back an entry the view let lapse while the engine kept the block (an
 * engine never stores a block it reuses again), so it must not outlive the cache it speaks of: a
 * use from before the engine's current epoch began, or of an engine that is dead or unknown, is
 * dropped and counted.
 */
public final class UseConfirmer extends KeyedCoProcessFunction<String, EngineStatus, LocationUpdate, LocationUpdate> {

    private final double lifetimes;
    private transient ValueState<EngineEpoch> engine;
    private transient Counter dropped;

    /** @param lifetimes entry lifetime in residencies: ln(1 / confidence floor) */
    public UseConfirmer(double lifetimes) {
        this.lifetimes = lifetimes;
    }

    @Override
    public void open(OpenContext openContext) {
        engine = getRuntimeContext().getState(new ValueStateDescriptor<>("engine-epoch", TypeInformation.of(EngineEpoch.class)));
        dropped = getRuntimeContext().getMetricGroup().counter("kvr_confirmations_of_an_older_cache_total");
    }

    @Override
    public void processElement1(EngineStatus s, Context ctx, Collector<LocationUpdate> out) throws Exception {
        if (s.currentHealth == EngineHealth.DEAD) {
            // State clearing: a dead engine's cache is gone; uses of it confirm nothing until it reports again.
            engine.clear();
            return;
        }
        EngineEpoch known = engine.value();
        EngineEpoch e = new EngineEpoch();
        e.epoch = s.epoch;
        e.sinceMs = known != null && known.epoch == s.epoch ? known.sinceMs : s.tsMs;
        e.lifetimeMs = EngineTracker.lifetimeMs(s.residencyMs, lifetimes);
        engine.update(e);
    }

    @Override
    public void processElement2(LocationUpdate u, Context ctx, Collector<LocationUpdate> out) throws Exception {
        EngineEpoch e = engine.value();
        if (e == null || u.storedAtMs < e.sinceMs) {
            dropped.inc();
            return;
        }
        out.collect(LocationUpdate.confirm(u.blockHash, u.tag, u.engine, u.storedAtMs, e.epoch, u.storedAtMs + e.lifetimeMs));
    }
}
