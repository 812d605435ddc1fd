package dev.kvrouter.jobs.view.functions;

import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.jobs.io.HotPrefix;
import dev.kvrouter.jobs.io.LocationUpdate;
import dev.kvrouter.jobs.view.model.BlockHolders;
import dev.kvrouter.jobs.view.model.BlockInput;
import dev.kvrouter.jobs.view.model.Holder;
import dev.kvrouter.jobs.view.model.ViewResync;
import dev.kvrouter.redis.ViewWrite;
import dev.kvrouter.view.ViewChange;
import dev.kvrouter.view.ViewOp;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.functions.co.KeyedBroadcastProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The prefix-location table, keyed by canonical block: which engines hold the block, since when,
 * under which cache epoch, until when. Every change emits the block's whole holder list as one
 * view write (so a replay rewrites the same value) and a changelog record.
 *
 * <p>An entry expires when its confidence exp(-age / residency) would fall below the floor; the
 * engine side computed that instant ({@code expireAtMs}) from the engine's residency. One
 * processing-time timer per block, at its earliest expiry, removes what is due and moves on to the
 * next; a block with no holder left has no state and no timer.
 *
 * <p>An engine reuses a cached block without storing it again, so a block every request shares
 * would lapse from the view while it is the hottest block on the engine. Request outcomes confirm
 * it ({@link UseConfirmer} stamps each with the engine's epoch and an entry's life there): the
 * holder's time moves to the use and its expiry by a whole life (an LRU cache keeps what is used),
 * and a holder the view let lapse comes back. A confirmation from an older epoch than the holder's
 * changes nothing; one within an eighth of a life of the holder's time is not worth a write (a hot
 * block is used on every request). A block evicted right after a request that used it, whose removal
 * overtakes that request's outcome, comes back for one life: the staleness ratio counts such picks.
 *
 * <p>Hot prefixes come in on the same keyed input, by their first block: each leaves on
 * {@link #HOT_PREFIXES} with that block's holders, for the replica planner (nothing is kept).
 *
 * <p>The broadcast input asks for the whole view again ({@link ViewResync}: Redis lost it, or the
 * job started from a checkpoint or savepoint): every block in this instance's state is written
 * again, as it stands, group by group, without changing the state or its timers.
 */
public final class PrefixLocationTable extends KeyedBroadcastProcessFunction<Long, BlockInput, ViewResync, ViewWrite> {

    public static final OutputTag<ViewChange> VIEW_CHANGES = new OutputTag<>("view-changes") {};
    public static final OutputTag<HotPrefix> HOT_PREFIXES = new OutputTag<>("hot-prefix-holders") {};

    private static final Logger LOG = LoggerFactory.getLogger(PrefixLocationTable.class);

    /** The block's holders, sorted by engine; no value at all once none is left. */
    private final ValueStateDescriptor<BlockHolders> blockHolders =
            new ValueStateDescriptor<>("block-holders", TypeInformation.of(BlockHolders.class));

    private transient ValueState<BlockHolders> block;
    /**
     * Block x engine entries this instance holds, for the {@code kvr_view_block_entries} gauge (the
     * view's entries: the sum over instances). Kept as holders come and go, and counted exactly
     * whenever the whole state is walked (every resync, one at every start and restore).
     */
    private transient volatile long entries; // written by the task, read by the reporter's thread

    @Override
    public void open(OpenContext openContext) {
        block = getRuntimeContext().getState(blockHolders);
        getRuntimeContext().getMetricGroup().gauge("kvr_view_block_entries", () -> entries);
    }

    @Override
    public void processElement(BlockInput in, ReadOnlyContext ctx, Collector<ViewWrite> out) throws Exception {
        if (in.update != null) {
            apply(in.update, ctx, out);
        } else {
            lookUp(in.hotPrefix, ctx);
        }
    }

    /**
     * Writes every block this instance holds again, in full, at Redis's request. State and timers
     * stay as they are: this only repeats what the view should already say.
     */
    @Override
    public void processBroadcastElement(ViewResync resync, Context ctx, Collector<ViewWrite> out) throws Exception {
        List<Resent> chunk = new ArrayList<>();
        long[] blocks = {0};
        long[] held = {0};
        ctx.applyToKeyedState(blockHolders, (key, state) -> {
            BlockHolders holders = state.value();
            if (holders != null && !holders.isEmpty()) {
                chunk.add(new Resent(key, holders));
                blocks[0]++;
                held[0] += holders.size();
                if (chunk.size() >= RESYNC_CHUNK_BLOCKS) {
                    emitByGroup(chunk, resync.atMs, out);
                }
            }
        });
        emitByGroup(chunk, resync.atMs, out);
        entries = held[0];
        LOG.info("view written again from state ({}): {} blocks", resync.reason, blocks[0]);
    }

    /**
     * Blocks resent per sorted chunk. State is walked in key (block hash) order, which scatters a
     * group's blocks; sorted by group, a chunk reaches Redis as one HSET (and one expiry) per group
     * and sink batch instead of one per block: three commands a block become a few per hundred.
     * Bounds what the walk holds at once.
     */
    static final int RESYNC_CHUNK_BLOCKS = 65_536;

    /** A block to write again, with its holders as the state holds them. */
    private record Resent(long block, BlockHolders holders) {
        long tag() {
            return holders.get(0).tag;
        }
    }

    /** Writes the chunk's blocks group after group, and empties it. */
    private static void emitByGroup(List<Resent> chunk, long atMs, Collector<ViewWrite> out) {
        chunk.sort(Comparator.comparingLong(Resent::tag));
        for (Resent r : chunk) {
            emit(r.block(), r.tag(), r.holders(), atMs, out);
        }
        chunk.clear();
    }

    private void apply(LocationUpdate u, ReadOnlyContext ctx, Collector<ViewWrite> out) throws Exception {
        long now = ctx.timerService().currentProcessingTime();
        BlockHolders current = holders();
        Holder old = current.find(u.engine);
        if (u.confirmed) {
            confirm(u, current, old, now, ctx, out);
        } else if (u.stored) {
            put(u, current, old, u.storedAtMs, u.expireAtMs, u.medium, now, ctx, out);
        } else if (old != null && old.epoch <= u.epoch) {
            // State clearing: the engine lost the block (evicted, cleared, restarted or dead).
            BlockHolders left = update(current, current.without(u.engine));
            emit(ctx.getCurrentKey(), old.tag, left, u.eventTimeMs, out);
            ctx.output(VIEW_CHANGES, change(ctx.getCurrentKey(), ViewOp.REMOVE, 0, old, old.version + 1, u.eventTimeMs, u.cause));
        }
    }

    /** Records that the engine held this block when a request used it, unless the holder already says as much. */
    private void confirm(LocationUpdate u, BlockHolders current, Holder old, long now, ReadOnlyContext ctx, Collector<ViewWrite> out)
            throws Exception {
        long usedAt = Math.min(u.storedAtMs, now);
        long lifetime = u.expireAtMs - u.storedAtMs;
        if (usedAt + lifetime <= now) {
            return; // its life ended before it got here
        }
        if (old != null && (old.epoch > u.epoch || old.epoch == u.epoch && usedAt - old.storedAtMs < Math.max(1, lifetime / 8))) {
            return;
        }
        put(u, current, old, usedAt, usedAt + lifetime, old == null ? null : old.medium, now, ctx, out);
    }

    /** The engine holds the block as of {@code seenAt} until {@code expireAt}: one holder, one expiry timer, one view write. */
    private void put(LocationUpdate u, BlockHolders current, Holder old, long seenAt, long expireAt, String medium, long now,
                     ReadOnlyContext ctx, Collector<ViewWrite> out) throws Exception {
        Holder h = new Holder();
        h.engine = u.engine;
        h.storedAtMs = seenAt;
        h.epoch = u.epoch;
        h.expireAtMs = expireAt;
        h.medium = medium;
        h.tag = u.tag;
        h.version = old == null ? now : Math.max(now, old.version + 1);
        BlockHolders next = current.with(h);
        // One expiry timer per block, at or before every holder's expiry: a holder that expires
        // sooner than the block's timer moves it earlier; a later one waits for that timer, which
        // then moves on to the next expiry (a block used on every request keeps one timer).
        if (next.timerAtMs == 0 || expireAt < next.timerAtMs) {
            ctx.timerService().registerProcessingTimeTimer(expireAt);
            next = next.withTimerAt(expireAt);
        }
        update(current, next);
        emit(ctx.getCurrentKey(), u.tag, next, u.eventTimeMs, out);
        ctx.output(VIEW_CHANGES, change(ctx.getCurrentKey(), ViewOp.UPSERT, 1.0, h, h.version, u.eventTimeMs, u.cause));
    }

    private void lookUp(HotPrefix p, ReadOnlyContext ctx) throws Exception {
        BlockHolders held = holders();
        String[] engines = new String[held.size()];
        for (int i = 0; i < engines.length; i++) {
            engines[i] = held.get(i).engine;
        }
        ctx.output(HOT_PREFIXES, p.withHolders(engines));
    }

    // Timer path: the block's expiry timer. Holders past their expiry leave; a block left with no
    // holder leaves the state entirely (update clears the value, and no timer follows). Otherwise
    // the timer moves on to the earliest expiry left. A timer the block no longer keeps (one that
    // a sooner expiry replaced) finds nothing due and changes nothing.
    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<ViewWrite> out) throws Exception {
        BlockHolders current = holders();
        if (current.isEmpty() || current.timerAtMs > timestamp) {
            return;
        }
        BlockHolders left = current;
        for (int i = 0; i < current.size(); i++) {
            Holder h = current.get(i);
            if (h.expireAtMs <= timestamp) {
                left = left.without(h.engine);
                ctx.output(VIEW_CHANGES, change(ctx.getCurrentKey(), ViewOp.REMOVE, 0, h, h.version + 1, timestamp, "decayed"));
            }
        }
        if (!left.isEmpty()) {
            long next = left.earliestExpiry();
            ctx.timerService().registerProcessingTimeTimer(next);
            left = left.withTimerAt(next);
        }
        update(current, left);
        if (left.size() != current.size()) {
            emit(ctx.getCurrentKey(), current.get(0).tag, left, timestamp, out);
        }
    }

    private BlockHolders holders() throws Exception {
        BlockHolders b = block.value();
        return b == null ? BlockHolders.EMPTY : b;
    }

    /** Stores the block's holders (in place of {@code current}); state clearing: a block with none left keeps no state at all. */
    private BlockHolders update(BlockHolders current, BlockHolders next) throws Exception {
        entries += next.size() - current.size();
        if (next.isEmpty()) {
            block.clear();
        } else {
            block.update(next);
        }
        return next;
    }

    /** The block's whole holder list, in engine order, so the same holders always give the same text. */
    private static void emit(long blockHash, long tag, BlockHolders holders, long eventTimeMs, Collector<ViewWrite> out) {
        if (holders.isEmpty()) {
            out.collect(ViewWrite.block(tag, blockHash, null, 0, eventTimeMs));
            return;
        }
        StringBuilder value = new StringBuilder(32 * holders.size());
        long expireAt = 0;
        for (int i = 0; i < holders.size(); i++) {
            Holder h = holders.get(i);
            if (value.length() > 0) {
                value.append(',');
            }
            ViewLayout.appendHolder(value, h.engine, h.storedAtMs, h.epoch);
            expireAt = Math.max(expireAt, h.expireAtMs);
        }
        out.collect(ViewWrite.block(tag, blockHash, value.toString(), expireAt, eventTimeMs));
    }

    private static ViewChange change(long blockHash, ViewOp op, double confidence, Holder h, long version, long eventTimeMs,
                                     String cause) {
        // Every field set by name, without the builder's per-field validation: one record per holder change.
        ViewChange c = new ViewChange();
        c.setBlockHash(blockHash);
        c.setEngineId(h.engine);
        c.setOp(op);
        c.setConfidence(confidence);
        c.setMedium(h.medium);
        c.setVersion(version);
        c.setTsMs(eventTimeMs);
        c.setCause(cause);
        return c;
    }
}
