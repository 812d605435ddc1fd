package dev.kvrouter.jobs.view.functions;

import dev.kvrouter.jobs.view.model.EngineStatus;
import dev.kvrouter.jobs.view.model.PrefillRate;
import dev.kvrouter.jobs.view.model.PrefillSample;
import dev.kvrouter.redis.EngineEntry;
import dev.kvrouter.redis.ViewWrite;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;

/**
 * The engine table's rows: each engine status becomes its entry, with the rate the engine prefills
 * at as its completed requests show it. Keyed by engine.
 *
 * <p>{@code kvr_pick} prices the prefill an engine has queued and the one a request would add there
 * at this rate: an engine slowed down (thermal throttling, a noisy neighbour, a longer context
 * than the others serve) is seen as slow from its own outcomes, not assumed as fast as the
 * configured {@code cost.prefill-tokens-per-s}. The rate is the ratio of the tokens computed to
 * the milliseconds spent, each request weighted by {@code exp(-age / 10 s)}, plus a prior of
 * {@link #PRIOR_MS} of prefill at the configured rate: an engine that stops getting requests drifts
 * back to the configured rate within a minute or so, so it gets requests again and shows whether
 * it is still slow (a placement rule must not starve its own evidence).
 */
public final class EngineTable extends KeyedCoProcessFunction<String, EngineStatus, PrefillSample, ViewWrite> {

    /** How fast a sample's weight decays: a slowdown shows after a few requests, a recovery likewise. */
    public static final long DECAY_MS = 10_000;
    /** Weight of the configured rate, in milliseconds of prefill: a handful of requests outweighs it. */
    public static final double PRIOR_MS = 250;

    private final double configuredTokensPerS;
    private transient ValueState<PrefillRate> rate;
    private transient Counter unknownEngine;

    /** @param configuredTokensPerS {@code cost.prefill-tokens-per-s}: the rate an engine is assumed at without evidence */
    public EngineTable(double configuredTokensPerS) {
        this.configuredTokensPerS = configuredTokensPerS;
    }

    @Override
    public void open(OpenContext openContext) {
        rate = getRuntimeContext().getState(new ValueStateDescriptor<>("prefill-rate", TypeInformation.of(PrefillRate.class)));
        unknownEngine = getRuntimeContext().getMetricGroup().counter("prefillSamplesOfAnUnknownEngine");
    }

    @Override
    public void processElement1(EngineStatus s, Context ctx, Collector<ViewWrite> out) throws Exception {
        if ("DEAD".equals(s.health)) {
            // State clearing: a dead engine leaves the table; if it comes back it is measured afresh.
            // This is the only clearing path, and it suffices: state exists only for engines the
            // tracker knows, and the tracker declares every engine it stops hearing from DEAD.
            rate.clear();
            out.collect(ViewWrite.engine(s.engine, null, s.tsMs));
            return;
        }
        PrefillRate r = rate.value();
        if (r == null) {
            r = new PrefillRate();
            r.atMs = s.tsMs;
            rate.update(r);
        }
        out.collect(ViewWrite.engine(s.engine, entry(s, tokensPerS(r, s.tsMs, configuredTokensPerS)), s.tsMs));
    }

    @Override
    public void processElement2(PrefillSample sample, Context ctx, Collector<ViewWrite> out) throws Exception {
        PrefillRate r = rate.value();
        if (r == null) {
            // An engine the tracker does not know (not yet, or no longer): keeping its rate would be
            // state nothing ever clears.
            unknownEngine.inc();
            return;
        }
        rate.update(add(r, sample));
    }

    /** The sums with one more sample, decayed to the later of the two times (a late sample counts for less). */
    static PrefillRate add(PrefillRate r, PrefillSample sample) {
        PrefillRate next = new PrefillRate();
        next.atMs = Math.max(r.atMs, sample.atMs);
        double keep = decay(next.atMs - r.atMs);
        double weight = decay(next.atMs - sample.atMs);
        next.tokens = r.tokens * keep + sample.tokens * weight;
        next.ms = r.ms * keep + sample.ms * weight;
        return next;
    }

    /**
     * Tokens per second at {@code nowMs}: the decayed sums with the prior; 0 (unknown, the pick uses
     * the configured rate) before the engine's first sample.
     */
    static int tokensPerS(PrefillRate r, long nowMs, double configuredTokensPerS) {
        if (r.ms <= 0) {
            return 0;
        }
        double keep = decay(nowMs - r.atMs);
        double tokens = r.tokens * keep + configuredTokensPerS * PRIOR_MS / 1000;
        double ms = r.ms * keep + PRIOR_MS;
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, Math.round(tokens / ms * 1000)));
    }

    private static double decay(long ageMs) {
        return Math.exp(-Math.max(0, ageMs) / (double) DECAY_MS);
    }

    static EngineEntry entry(EngineStatus s, int prefillTokensPerS) {
        return new EngineEntry(s.health, s.waiting, s.running, (int) Math.round(s.kvUsage * 1000), Math.max(1, s.residencyMs),
                s.epoch, s.unsynced, s.loadAtMs, s.role, s.slots, prefillTokensPerS);
    }
}
