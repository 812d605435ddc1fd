package dev.kvrouter.jobs.view.functions;

import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.events.EngineHealth;
import dev.kvrouter.jobs.io.RequestSample;
import dev.kvrouter.jobs.view.model.EngineSpeed;
import dev.kvrouter.jobs.view.model.EngineStatus;
import dev.kvrouter.redis.ViewWrite;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;

/**
 * The engine table's rows: each engine status becomes its entry, with two speeds its completed
 * requests show. Keyed by engine.
 *
 * <ul>
 * <li><b>Prefill rate.</b> {@code kvr_pick} prices the prefill an engine has queued and the one a
 *     request would add there at this rate: an engine slowed down (thermal throttling, a noisy
 *     neighbour) is seen as slow from its own outcomes, and under chunked prefill from its KV
 *     events a chunk after the slowdown (consecutive chunks of one prompt, {@link EngineTracker#PREFILL_PACE}:
 *     an outcome comes only once the request has decoded too), not assumed as fast as the configured
 *     {@code cost.prefill-tokens-per-s}. It is the ratio of the tokens computed to the milliseconds
 *     spent, plus a prior of {@link #PRIOR_MS} of prefill at the configured rate: an engine that
 *     stops getting requests drifts back to the configured rate within a minute or so, so it gets
 *     requests again and shows whether it is still slow (a placement rule must not starve its own
 *     evidence).</li>
 * <li><b>Slot time.</b> The mean time a request holds a sequence slot, start to end: with every slot
 *     of an engine taken, a request placed there waits about {@code slot time / slots} per request
 *     ahead of it, which {@code kvr_pick} weighs against the prefill another engine would redo.</li>
 * </ul>
 *
 * <p>Each request counts with weight {@code exp(-age / 10 s)}.
 */
public final class EngineTable extends KeyedCoProcessFunction<String, EngineStatus, RequestSample, ViewWrite> {

    /** How fast a request's weight decays: a slowdown shows after a few requests, a recovery likewise. */
    public static final long DECAY_MS = 10_000;
    /** Weight of the configured prefill rate, in milliseconds of prefill: a handful of requests outweighs it. */
    public static final double PRIOR_MS = 250;
    /**
     * A chunk seen in the KV events counts as prefill only if it took at most this many times what the
     * configured rate gives it: a longer gap is an idle engine, not a slow one (a conversation's next
     * turn extending the prompt its engine stored last). Slowdowns up to this factor show.
     */
    public static final double MAX_PACE_SLOWDOWN = 8;
    /**
     * A request's prefill counts only if its rate is within this factor of the configured one, either
     * way, and its slot time within {@link #MAX_SLOT_MS}: outcomes come from balancers, and one that
     * reports a billion tokens in a millisecond (a bug, or a hostile caller) must not make an engine look
     * infinitely fast, nor one claiming an hour for ten tokens make it look dead. Real engines, even
     * throttled, preempted or misconfigured by an order of magnitude or two, fall inside.
     */
    public static final double MAX_RATE_FACTOR = 1_000;
    public static final double MAX_SLOT_MS = 3_600_000;

    private final double configuredTokensPerS;
    private transient ValueState<EngineSpeed> speed;
    private transient Counter unknownEngine;
    private transient Counter outOfRange;

    /** @param configuredTokensPerS {@code cost.prefill-tokens-per-s}: the rate an engine is assumed at without evidence */
    public EngineTable(double configuredTokensPerS) {
        this.configuredTokensPerS = configuredTokensPerS;
    }

    @Override
    public void open(OpenContext openContext) {
        speed = getRuntimeContext().getState(new ValueStateDescriptor<>("engine-speed", TypeInformation.of(EngineSpeed.class)));
        unknownEngine = getRuntimeContext().getMetricGroup().counter("kvr_request_samples_of_an_unknown_engine_total");
        outOfRange = getRuntimeContext().getMetricGroup().counter("kvr_request_samples_out_of_range_total");
    }

    @Override
    public void processElement1(EngineStatus s, Context ctx, Collector<ViewWrite> out) throws Exception {
        if (s.currentHealth == EngineHealth.DEAD) {
            // State clearing: a dead engine leaves the table; if it comes back it is measured afresh.
            // This is the only clearing path, and it suffices: state exists only for engines the
            // tracker knows, and the tracker declares every engine it stops hearing from DEAD.
            speed.clear();
            out.collect(ViewWrite.engine(s.engine, null, s.tsMs));
            return;
        }
        EngineSpeed r = speed.value();
        if (r == null) {
            r = new EngineSpeed();
            r.atMs = s.tsMs;
            speed.update(r);
        }
        out.collect(ViewWrite.engine(s.engine, entry(s, tokensPerS(r, s.tsMs, configuredTokensPerS), slotMs(r)), s.tsMs));
    }

    @Override
    public void processElement2(RequestSample sample, Context ctx, Collector<ViewWrite> out) throws Exception {
        EngineSpeed r = speed.value();
        if (r == null) {
            // An engine the tracker does not know (not yet, or no longer): keeping its speed would be
            // state nothing ever clears.
            unknownEngine.inc();
            return;
        }
        if (sample.fromKvEvents && sample.prefillMs > MAX_PACE_SLOWDOWN * sample.prefillTokens / configuredTokensPerS * 1000) {
            return; // a gap, not a chunk (see MAX_PACE_SLOWDOWN)
        }
        if (!plausible(sample, configuredTokensPerS)) {
            outOfRange.inc();
            return;
        }
        speed.update(add(r, sample));
    }

    /** Whether a sample's prefill rate and slot time are within what any engine could show (MAX_RATE_FACTOR, MAX_SLOT_MS). */
    static boolean plausible(RequestSample sample, double configuredTokensPerS) {
        if (sample.prefillMs > 0) {
            double rate = sample.prefillTokens / sample.prefillMs * 1000;
            if (!(rate >= configuredTokensPerS / MAX_RATE_FACTOR && rate <= configuredTokensPerS * MAX_RATE_FACTOR)) {
                return false;
            }
        }
        return !(sample.slotMs < 0 || sample.slotMs > MAX_SLOT_MS);
    }

    /** The sums with one more request, decayed to the later of the two times (a late request counts for less). */
    static EngineSpeed add(EngineSpeed r, RequestSample sample) {
        EngineSpeed next = new EngineSpeed();
        next.atMs = Math.max(r.atMs, sample.atMs);
        double keep = decay(next.atMs - r.atMs);
        double weight = decay(next.atMs - sample.atMs);
        next.prefillTokens = r.prefillTokens * keep + sample.prefillTokens * weight;
        next.prefillMs = r.prefillMs * keep + sample.prefillMs * weight;
        next.slotMs = r.slotMs * keep + sample.slotMs * weight;
        next.slotRequests = r.slotRequests * keep + (sample.slotMs > 0 ? weight : 0);
        return next;
    }

    /**
     * Tokens per second at {@code nowMs}: the decayed sums with the prior; 0 (unknown, the pick uses
     * the configured rate) before the engine's first measured prefill.
     */
    static int tokensPerS(EngineSpeed r, long nowMs, double configuredTokensPerS) {
        if (r.prefillMs <= 0) {
            return 0;
        }
        double keep = decay(nowMs - r.atMs);
        double tokens = r.prefillTokens * keep + configuredTokensPerS * PRIOR_MS / 1000;
        double ms = r.prefillMs * keep + PRIOR_MS;
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, Math.round(tokens / ms * 1000)));
    }

    /** The mean time a request holds a slot, in milliseconds; 0 (unknown) before the first request measured. */
    static int slotMs(EngineSpeed r) {
        return r.slotRequests > 0 ? (int) Math.min(Integer.MAX_VALUE, Math.round(r.slotMs / r.slotRequests)) : 0;
    }

    private static double decay(long ageMs) {
        return Math.exp(-Math.max(0, ageMs) / (double) DECAY_MS);
    }

    static EngineEntry entry(EngineStatus s, int prefillTokensPerS, int slotMs) {
        return new EngineEntry(s.currentHealth.name(), s.waiting, s.running, (int) Math.round(s.kvUsage * 1000), Math.max(1, s.residencyMs),
                s.epoch, s.unsynced, s.loadAtMs, s.servingRole.name(), s.slots, prefillTokensPerS, slotMs, s.kvFreeTokens);
    }
}
