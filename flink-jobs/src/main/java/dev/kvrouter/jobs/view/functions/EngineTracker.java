package dev.kvrouter.jobs.view.functions;

import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.events.AllBlocksCleared;
import dev.kvrouter.events.BlockRemoved;
import dev.kvrouter.events.BlockStored;
import dev.kvrouter.events.EngineHealth;
import dev.kvrouter.events.EngineLifecycle;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.jobs.config.EngineSettings;
import dev.kvrouter.jobs.config.ViewSettings;
import dev.kvrouter.jobs.io.LocationUpdate;
import dev.kvrouter.jobs.io.RequestSample;
import dev.kvrouter.jobs.view.model.EngineBlock;
import dev.kvrouter.jobs.view.model.EngineHealthState;
import dev.kvrouter.jobs.view.model.EngineStatus;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Everything per engine, keyed by engine key: its blocks (engine hash → canonical chain state),
 * its health from load reports, silence and sequence numbers, and its learned residency time.
 * Emits the canonical blocks it gains and loses, and its status on a side output.
 *
 * <p>Health: READY, BUSY (queue over the cap; entries kept, affinity suspended by pick), DRAINING
 * (lifecycle says so), SUSPECT (silent past engine.suspect-after), DEAD (silent past
 * engine.dead-after: entries dropped from the view, the chains kept until engine.forget-after, and
 * indexed again if its next batch continues its sequence: a stall past the limit), RESTARTED
 * (AllBlocksCleared, or the sequence went back on a batch stamped later than the last one applied:
 * entries dropped, then READY under a new epoch). A
 * sequence gap marks the engine unsynced (pick halves its confidence) until every entry from before
 * the gap has expired.
 *
 * <p>A batch whose sequence is at or below the last one applied, stamped no later than it, is a
 * duplicate — the same batch read again after a restore from an at-least-once checkpoint, sent
 * twice by a producer's retry, or overtaken by a later one — and is counted and ignored: a replay
 * must not read as a restart, which would drop the engine's entries.
 *
 * <p>Silence is measured from the engine's last sign of life or from when this task (re)started,
 * whichever is later: after a restore, the job's own downtime is not the engines' silence, and no
 * engine is judged silent before engine.suspect-after has passed since the job resumed reading.
 *
 * <p>And it is measured against the other engines: an engine is silent for as long as the others were
 * heard without it. When this task hears from no engine at all for engine.suspect-after, its input
 * stalled (a Kafka or registry outage, back-pressure from a Redis failover), not the fleet: silences
 * stop growing, no engine turns suspect or dead, entries stay (the view's age, which the sink stamps
 * only when data flows, tells balancers to stop trusting it). Bounded: past engine.stall-limit of
 * silence from every engine, the fleet is taken for dead and judged by the clock again. Each task
 * judges the engines it follows (with parallelism above 1, those of its key group).
 */
public final class EngineTracker extends KeyedCoProcessFunction<String, KvEventBatch, EngineLoad, LocationUpdate> {

    public static final OutputTag<EngineStatus> ENGINE_STATUS = new OutputTag<>("engine-status") {};
    /** How fast the engine prefills, from consecutive chunks of one prefill in its KV events ({@link RequestSample#pace}). */
    public static final OutputTag<RequestSample> PREFILL_PACE = new OutputTag<>("prefill-pace") {};
    /**
     * A {@code BlockStored} counts as a chunk of a prefill in progress from this many tokens on: a
     * decode step stores a block or two of its output, which says nothing of prefill speed.
     */
    static final int MIN_PACE_TOKENS = 256;

    /** The name of the per-engine health state (savepoints know it by this name). */
    static final String HEALTH_STATE = "engine-health";

    /** Health from which the engine's next event makes it live again. */
    private static final EnumSet<EngineHealth> NOT_LIVE =
            EnumSet.of(EngineHealth.UNKNOWN, EngineHealth.SUSPECT, EngineHealth.DEAD, EngineHealth.RESTARTED);

    private final int chunkTokens;
    private final int tagDepth;
    private final long defaultResidencyMs;
    private final long maxResidencyMs;
    private final double learningRate;
    private final long suspectAfterMs;
    private final long deadAfterMs;
    private final long stallLimitMs;
    private final long forgetAfterMs;
    /** engine.kv-room: each engine's free KV room goes to the engine table. */
    private final boolean kvRoom;
    private final int queueCap;
    private final int maxBlocks;
    private final double lifetimes;
    private final long updateIntervalMs;

    private transient MapState<Long, EngineBlock> blocks;
    private transient ValueState<EngineHealthState> health;
    private transient CanonicalBlockHasher hasher;
    private transient Counter orphans;
    private transient Counter overCap;
    private transient Counter unknownRemovals;
    private transient Counter expiredOnArrival;
    private transient Counter duplicates;
    private transient Counter gaps;
    private transient Counter lostBatches;
    /** When this task started or was restored (processing time), set at its first element or timer; -1 before. */
    private transient long resumedAtMs;
    /** When this task last heard from any engine (processing time); -1 before the first. */
    private transient long heardAtMs;

    public EngineTracker(ViewSettings view, EngineSettings engines) {
        this.chunkTokens = view.chunkTokens();
        this.tagDepth = view.tagDepth();
        this.defaultResidencyMs = engines.defaultResidency().toMillis();
        this.maxResidencyMs = engines.maxResidency().toMillis();
        this.learningRate = engines.residencyLearningRate();
        this.suspectAfterMs = engines.suspectAfter().toMillis();
        this.deadAfterMs = engines.deadAfter().toMillis();
        this.stallLimitMs = engines.stallLimit().toMillis();
        this.forgetAfterMs = engines.forgetAfter().toMillis();
        this.kvRoom = engines.kvRoom();
        this.queueCap = engines.queueCap();
        this.maxBlocks = engines.maxBlocks();
        this.lifetimes = view.lifetimesToFloor();
        this.updateIntervalMs = engines.updateInterval().toMillis();
    }

    /** The key of an engine: its id, with {@code /dp<rank>} when it runs data parallelism (one cache per rank). */
    public static String engineKey(String engineId, Integer dataParallelRank) {
        return dataParallelRank == null ? engineId : engineId + "/dp" + dataParallelRank;
    }

    @Override
    public void open(OpenContext openContext) {
        MapStateDescriptor<Long, EngineBlock> blocksDescriptor =
                new MapStateDescriptor<>("engine-blocks", Types.LONG, TypeInformation.of(EngineBlock.class));
        // Bounded by engine.max-blocks; every block leaves on removal, clear, restart or death. No
        // state TTL: on the heap backend its cleanup copies an engine's whole map on access, or on
        // every checkpoint, which showed as the largest cost in profiles.
        blocks = getRuntimeContext().getMapState(blocksDescriptor);
        health = getRuntimeContext().getState(new ValueStateDescriptor<>(HEALTH_STATE, TypeInformation.of(EngineHealthState.class)));
        hasher = new CanonicalBlockHasher(chunkTokens);
        var metrics = getRuntimeContext().getMetricGroup();
        orphans = metrics.counter("kvr_blocks_with_unknown_parent_total");
        overCap = metrics.counter("kvr_blocks_over_engine_cap_total");
        unknownRemovals = metrics.counter("kvr_removals_of_unknown_blocks_total");
        expiredOnArrival = metrics.counter("kvr_blocks_expired_on_arrival_total");
        duplicates = metrics.counter("kvr_duplicate_batches_total");
        gaps = metrics.counter("kvr_sequence_gaps_total");
        lostBatches = metrics.counter("kvr_batches_lost_total");
        resumedAtMs = -1;
        heardAtMs = -1;
    }

    @Override
    public void processElement1(KvEventBatch batch, Context ctx, Collector<LocationUpdate> out) throws Exception {
        long now = ctx.timerService().currentProcessingTime();
        resumed(now);
        heardAtMs = now;
        String engine = ctx.getCurrentKey();
        EngineHealthState h = state();
        if (h.lastSeq >= 0 && batch.getSeq() <= h.lastSeq && batch.getTsMs() <= h.lastBatchTsMs) {
            duplicates.inc();
            return;
        }
        if (h.lastSeq >= 0 && batch.getSeq() <= h.lastSeq) {
            dropAll(engine, h, now, "engine-restarted", out);
            changeHealth(h, EngineHealth.RESTARTED, "sequence went back from " + h.lastSeq + " to " + batch.getSeq()
                    + ": the engine restarted and its cache is gone", now, ctx);
        } else if (h.lastSeq >= 0 && batch.getSeq() > h.lastSeq + 1) {
            gaps.inc();
            lostBatches.inc(batch.getSeq() - h.lastSeq - 1);
            h.unsyncedUntilMs = now + entryLifetimeMs(h);
            // Timer path: the check at that instant clears the unsynced mark (see onTimer).
            ctx.timerService().registerProcessingTimeTimer(h.unsyncedUntilMs);
            announce(h, h.currentHealth, (batch.getSeq() - h.lastSeq - 1) + " batch(es) lost (sequence " + h.lastSeq + " -> "
                    + batch.getSeq() + "): confidence lowered until the entries from before the gap expire", now, ctx);
        }
        if (h.parked) {
            // Taken for dead, and its sequence goes on: the same process, its cache as it was.
            unpark(engine, h, now, batch.getTsMs(), out);
        }
        h.lastSeq = batch.getSeq();
        h.lastBatchTsMs = batch.getTsMs();
        h.lastSeenMs = now;
        if (NOT_LIVE.contains(h.currentHealth)) {
            changeHealth(h, liveHealth(h), "the engine is sending events", now, ctx);
        }
        long storedAt = Math.min(batch.getTsMs(), now);
        for (Object event : batch.getEvents()) {
            if (event instanceof BlockStored stored) {
                store(engine, h, batch, stored, storedAt, now, ctx, out);
            } else if (event instanceof BlockRemoved removed) {
                remove(engine, h, removed, now, out);
            } else if (event instanceof AllBlocksCleared) {
                dropAll(engine, h, now, "all-blocks-cleared", out);
                changeHealth(h, EngineHealth.RESTARTED, "the engine cleared its prefix cache", now, ctx);
                changeHealth(h, liveHealth(h), "the engine is sending events", now, ctx);
            }
        }
        publish(h, now, ctx);
        scheduleCheck(h, ctx);
        health.update(h);
    }

    @Override
    public void processElement2(EngineLoad load, Context ctx, Collector<LocationUpdate> out) throws Exception {
        long now = ctx.timerService().currentProcessingTime();
        resumed(now);
        heardAtMs = now;
        EngineHealthState h = state();
        h.waiting = load.getWaiting();
        h.running = load.getRunning();
        if (load.getMaxRunning() > 0) {
            h.slots = load.getMaxRunning(); // the engine's own figure (it may change with a restart)
        } else if (h.waiting > 0) {
            // Requests wait only when the engine runs all it can (or its KV cache is full): a lower bound of its slots.
            h.slots = Math.max(h.slots, h.running);
        }
        h.kvUsed = load.getKvBlocksUsed();
        h.kvCapacity = load.getKvBlocksCapacity();
        h.reportedLifecycle = load.getLifecycle();
        h.servingRole = load.getRole();
        h.lastSeenMs = now;
        h.loadAtMs = Math.min(load.getTsMs(), now);
        EngineHealth next = liveHealth(h);
        String reason = switch (next) {
            case BUSY -> h.waiting + " requests waiting, over the queue cap of " + queueCap;
            case DRAINING -> "the engine reports lifecycle " + h.reportedLifecycle;
            default -> "load report received";
        };
        changeHealth(h, next, reason, now, ctx);
        publish(h, now, ctx);
        scheduleCheck(h, ctx);
        health.update(h);
    }

    /** What a live engine's health is, from its last load report. */
    private EngineHealth liveHealth(EngineHealthState h) {
        if (h.reportedLifecycle == EngineLifecycle.DRAINING || h.reportedLifecycle == EngineLifecycle.STOPPING) {
            return EngineHealth.DRAINING;
        }
        return h.waiting > queueCap ? EngineHealth.BUSY : EngineHealth.READY;
    }

    private void store(String engine, EngineHealthState h, KvEventBatch batch, BlockStored s, long storedAt, long now, Context ctx,
                       Collector<LocationUpdate> out) throws Exception {
        long tip;
        int depth;
        long anchor;
        int[] partial;
        if (s.getParentBlockHash() == null) {
            tip = hasher.root(batch.getModel(), s.getLoraName());
            depth = 0;
            anchor = 0;
            partial = EngineBlock.NO_PARTIAL;
        } else {
            long parentKey = Validation.engineHashKey(s.getParentBlockHash());
            EngineBlock parent = blocks.get(parentKey);
            if (parent == null) {
                // Without the parent's chain state these blocks cannot be named canonically.
                orphans.inc(s.getBlockHashes().size());
                return;
            }
            // The next chunk of the prompt the engine was prefilling (it stored nothing else since):
            // its tokens over the time since the chunk before show the engine's speed now, seconds
            // before the request's outcome would (EngineTable weighs it, and drops a gap too long to
            // be one chunk: an idle engine's next request extending the same prompt).
            int tokens = s.getBlockHashes().size() * s.getBlockSize();
            if (parentKey == h.lastStoredKey && parent.storedAtMs < storedAt && tokens >= MIN_PACE_TOKENS) {
                ctx.output(PREFILL_PACE, RequestSample.pace(engine, tokens, storedAt - parent.storedAtMs, storedAt));
            }
            tip = parent.chainTip;
            depth = parent.depth;
            anchor = parent.anchor;
            partial = parent.partial;
        }
        long expireAt = storedAt + entryLifetimeMs(h);
        int size = s.getBlockSize();
        h.blockTokens = size;
        List<Integer> tokens = s.getTokenIds();
        List<String> extra = s.getExtraKeys();
        for (int i = 0; i < s.getBlockHashes().size(); i++) {
            long key = Validation.engineHashKey(s.getBlockHashes().get(i));
            boolean known = blocks.contains(key);
            if (!known && h.blockCount >= maxBlocks) {
                overCap.inc(s.getBlockHashes().size() - i);
                return;
            }
            int[] buffer = Arrays.copyOf(partial, partial.length + size);
            for (int t = 0; t < size; t++) {
                buffer[partial.length + t] = tokens.get(i * size + t);
            }
            int full = buffer.length / chunkTokens;
            EngineBlock block = new EngineBlock(full);
            for (int c = 0; c < full; c++) {
                tip = hasher.next(tip, buffer, c * chunkTokens, extra);
                depth++;
                if (depth == tagDepth) {
                    anchor = tip;
                }
                long tag = depth <= tagDepth ? tip : anchor;
                block.complete(c, tip, tag);
                if (expireAt > now) {
                    out.collect(LocationUpdate.store(tip, tag, engine, storedAt, h.epoch, expireAt, s.getMedium(), batch.getTsMs()));
                } else {
                    expiredOnArrival.inc();
                }
            }
            partial = full * chunkTokens == buffer.length ? EngineBlock.NO_PARTIAL
                    : Arrays.copyOfRange(buffer, full * chunkTokens, buffer.length);
            block.chainTip = tip;
            block.depth = depth;
            block.anchor = anchor;
            block.partial = partial;
            block.storedAtMs = storedAt;
            blocks.put(key, block);
            if (!known) {
                h.blockCount++;
            }
            h.lastStoredKey = key;
        }
    }

    private void remove(String engine, EngineHealthState h, BlockRemoved r, long now, Collector<LocationUpdate> out)
            throws Exception {
        for (ByteBuffer hash : r.getBlockHashes()) {
            long key = Validation.engineHashKey(hash);
            EngineBlock block = blocks.get(key);
            if (block == null) {
                unknownRemovals.inc();
                continue;
            }
            for (int c = 0; c < block.completed(); c++) {
                out.collect(LocationUpdate.remove(block.canonical(c), block.tag(c), engine, h.epoch, now, "removed"));
            }
            learnResidency(h, now - block.storedAtMs);
            blocks.remove(key);
            h.blockCount--;
        }
    }

    /** Every block of the engine leaves the view, and the epoch moves on so pick voids any write still in flight. */
    private void dropAll(String engine, EngineHealthState h, long now, String cause, Collector<LocationUpdate> out) throws Exception {
        leaveView(engine, h, now, cause, out);
        // State clearing: the engine's cache is gone (restart, clear); so is our copy of it.
        blocks.clear();
        h.blockCount = 0;
        h.lastStoredKey = 0;
        h.parked = false;
    }

    /**
     * Taken for dead: every block leaves the view and the epoch moves on, but the chains stay until the
     * engine is forgotten (engine.forget-after), for {@link #unpark} — a fleet silent past the stall
     * limit may have been the job's own stall, and its engines' next blocks build on what they held.
     */
    private void park(String engine, EngineHealthState h, long now, Collector<LocationUpdate> out) throws Exception {
        leaveView(engine, h, now, "engine-dead", out);
        h.parked = true;
    }

    private void leaveView(String engine, EngineHealthState h, long now, String cause, Collector<LocationUpdate> out) throws Exception {
        if (!h.parked) { // a parked engine's blocks left the view already
            for (Map.Entry<Long, EngineBlock> e : blocks.entries()) {
                EngineBlock block = e.getValue();
                for (int c = 0; c < block.completed(); c++) {
                    out.collect(LocationUpdate.remove(block.canonical(c), block.tag(c), engine, h.epoch, now, cause));
                }
            }
            h.epoch++;
        }
        h.unsyncedUntilMs = 0;
    }

    /** A parked engine's kept chains back in the view under its current epoch, as stored then, those whose life has not ended. */
    private void unpark(String engine, EngineHealthState h, long now, long eventTimeMs, Collector<LocationUpdate> out) throws Exception {
        long lifetime = entryLifetimeMs(h);
        for (Map.Entry<Long, EngineBlock> e : blocks.entries()) {
            EngineBlock block = e.getValue();
            long expireAt = block.storedAtMs + lifetime;
            if (expireAt <= now) {
                continue;
            }
            for (int c = 0; c < block.completed(); c++) {
                out.collect(LocationUpdate.store(block.canonical(c), block.tag(c), engine, block.storedAtMs, h.epoch, expireAt, null,
                        eventTimeMs));
            }
        }
        h.parked = false;
    }

    private void learnResidency(EngineHealthState h, long lifetimeMs) {
        double sample = Math.max(1_000, Math.min(maxResidencyMs, lifetimeMs));
        h.residencyMs = (1 - learningRate) * h.residencyMs + learningRate * sample;
    }

    /** Residency after memory pressure: full up to 70 % KV usage, falling to half at 100 %. */
    static double effectiveResidencyMs(EngineHealthState h) {
        double usage = h.kvCapacity > 0 ? (double) h.kvUsed / h.kvCapacity : 0;
        double pressure = usage <= 0.7 ? 1 : Math.max(0.5, 1 - (usage - 0.7) / 0.6);
        return h.residencyMs * pressure;
    }

    /** How long an entry stored now stays above the confidence floor. */
    long entryLifetimeMs(EngineHealthState h) {
        return lifetimeMs(Math.min(maxResidencyMs, effectiveResidencyMs(h)), lifetimes);
    }

    /** An entry's life: until its confidence exp(-age / residency) falls below the floor, {@code lifetimes} = ln(1 / floor). */
    static long lifetimeMs(double residencyMs, double lifetimes) {
        return (long) (residencyMs * lifetimes);
    }

    private void changeHealth(EngineHealthState h, EngineHealth next, String reason, long now, Context ctx) {
        if (next != h.currentHealth) {
            announce(h, next, reason, now, ctx);
        }
    }

    /** Publishes a change of the engine (health, or its sync state) to the view and the engine-state topic. */
    private void announce(EngineHealthState h, EngineHealth next, String reason, long now, Context ctx) {
        EngineHealth previous = h.currentHealth;
        h.currentHealth = next;
        ctx.output(ENGINE_STATUS, status(ctx.getCurrentKey(), h, previous, reason, now, true));
        h.publishedAtMs = now;
    }

    /** Load-only refreshes, at most once per engine.update-interval. */
    private void publish(EngineHealthState h, long now, Context ctx) {
        if (now - h.publishedAtMs >= updateIntervalMs) {
            ctx.output(ENGINE_STATUS, status(ctx.getCurrentKey(), h, h.currentHealth, "load", now, false));
            h.publishedAtMs = now;
        }
    }

    private EngineStatus status(String engine, EngineHealthState h, EngineHealth previous, String reason, long now, boolean changed) {
        EngineStatus s = new EngineStatus();
        s.engine = engine;
        s.currentHealth = h.currentHealth;
        s.previousHealth = previous;
        s.reason = reason;
        s.waiting = h.waiting;
        s.running = h.running;
        // Requests wait while slots are free only when the KV cache holds no more (vLLM admits a request
        // once its blocks fit): until a running one ends, the engine runs what it runs now. Long prompts in a
        // cache a few prompts deep fill it at a few requests, far below max_running, and the pick prices a
        // full engine's wait per request ahead of it (BENCHMARKS.md, "Robust affinity": cache pressure).
        s.slots = h.waiting > 0 && h.running > 0 && h.running < h.slots ? h.running : h.slots;
        s.kvUsage = h.kvCapacity > 0 ? (double) h.kvUsed / h.kvCapacity : 0;
        if (kvRoom && h.kvCapacity > 0) {
            s.kvFreeTokens = Math.max(0, h.kvCapacity - h.kvUsed) * (h.blockTokens > 0 ? h.blockTokens : chunkTokens);
        }
        s.servingRole = h.servingRole;
        s.residencyMs = (long) Math.min(maxResidencyMs, effectiveResidencyMs(h));
        s.epoch = h.epoch;
        s.unsynced = now < h.unsyncedUntilMs;
        s.tsMs = now;
        s.loadAtMs = h.loadAtMs;
        s.changed = changed;
        return s;
    }

    private EngineHealthState state() throws Exception {
        EngineHealthState h = health.value();
        return h == null ? EngineHealthState.fresh(defaultResidencyMs) : h.upgrade();
    }

    /** Notes when this task began processing after its start or restore: silence is not counted before it. */
    private void resumed(long now) {
        if (resumedAtMs < 0) {
            resumedAtMs = now;
        }
    }

    // Timer path: one liveness check pending per engine at a time. A check that finds the engine
    // heard from recently schedules the next one from its last sign of life.
    private void scheduleCheck(EngineHealthState h, Context ctx) {
        if (h.nextCheckMs == 0) {
            h.nextCheckMs = h.lastSeenMs + suspectAfterMs;
            ctx.timerService().registerProcessingTimeTimer(h.nextCheckMs);
        }
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<LocationUpdate> out) throws Exception {
        EngineHealthState h = health.value();
        if (h == null) {
            return;
        }
        h.upgrade();
        resumed(ctx.timerService().currentProcessingTime());
        // Timers restored from a checkpoint fire late, all at once: the engine's silence counts from
        // its last sign of life or from the job's resumption, whichever is later.
        long lastSign = Math.max(h.lastSeenMs, resumedAtMs);
        // Heard from no engine for suspect-after, and not yet for stall-limit: the input stalled, not
        // the fleet. The engine's silence is only what the others were heard without it.
        long heard = Math.max(heardAtMs, resumedAtMs);
        boolean stalled = timestamp - heard >= suspectAfterMs && timestamp - heard < stallLimitMs;
        long silence = (stalled ? heard : timestamp) - lastSign;
        long next;
        if (h.currentHealth == EngineHealth.DEAD) {
            if (silence >= deadAfterMs + forgetAfterMs) {
                // State clearing: dead and forgotten; nothing of the engine is left, no timer either.
                health.clear();
                blocks.clear();
                return;
            }
            next = lastSign + deadAfterMs + forgetAfterMs;
        } else if (silence >= deadAfterMs) {
            park(ctx.getCurrentKey(), h, timestamp, out);
            changeHealth(h, EngineHealth.DEAD, "no load report or event for " + silence + " ms (engine.dead-after "
                    + deadAfterMs + " ms): its cache entries leave the view", timestamp, ctx);
            next = lastSign + deadAfterMs + forgetAfterMs;
        } else if (silence >= suspectAfterMs) {
            changeHealth(h, EngineHealth.SUSPECT, "no load report or event for " + silence + " ms", timestamp, ctx);
            next = lastSign + deadAfterMs;
        } else {
            if (h.unsyncedUntilMs > 0 && timestamp >= h.unsyncedUntilMs) {
                h.unsyncedUntilMs = 0;
                announce(h, h.currentHealth, "in sync again: the entries from before the lost batches expired", timestamp, ctx);
            }
            next = lastSign + suspectAfterMs;
        }
        if (stalled) {
            // Timer path while stalled: nothing can change until input returns or the stall reaches
            // its limit; look again a suspect-after from now (the schedule above may lie in the past).
            next = Math.min(timestamp + suspectAfterMs, heard + stallLimitMs);
        }
        if (h.unsyncedUntilMs > 0) {
            next = Math.min(next, Math.max(h.unsyncedUntilMs, timestamp + 1));
        }
        h.nextCheckMs = next;
        ctx.timerService().registerProcessingTimeTimer(next);
        health.update(h);
    }
}
