package dev.kvrouter.jobs.view.functions;

import dev.kvrouter.jobs.view.model.Holder;
import dev.kvrouter.jobs.view.model.LocationUpdate;
import dev.kvrouter.redis.ViewLayout;
import dev.kvrouter.view.ViewChange;
import dev.kvrouter.view.ViewOp;
import dev.kvrouter.redis.ViewWrite;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import dev.kvrouter.jobs.replicas.HotPrefix;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * The prefix-location table, keyed by canonical block: which engines hold the block, since when,
 * under which cache epoch, until when. Every change emits the block's whole holder list as one
 * view write (so a replay rewrites the same value) and a changelog record.
 *
 * <p>An entry expires when its confidence exp(-age / residency) would fall below the floor; the
 * engine side computed that instant ({@code expireAtMs}) from the engine's residency. A
 * processing-time timer per expiry removes it; a block with no holder left has no state at all.
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
 * <p>The second input is hot prefixes, keyed by their first block: each leaves on
 * {@link #HOT_PREFIXES} with that block's holders, for the replica planner (nothing is kept).
 */
public final class PrefixLocationTable extends KeyedCoProcessFunction<Long, LocationUpdate, HotPrefix, ViewWrite> {

    public static final OutputTag<ViewChange> VIEW_CHANGES = new OutputTag<>("view-changes") {};
    public static final OutputTag<HotPrefix> HOT_PREFIXES = new OutputTag<>("hot-prefix-holders") {};

    private transient MapState<String, Holder> holders;

    @Override
    public void open(OpenContext openContext) {
        holders = getRuntimeContext().getMapState(
                new MapStateDescriptor<>("holders", Types.STRING, TypeInformation.of(Holder.class)));
    }

    @Override
    public void processElement1(LocationUpdate u, Context ctx, Collector<ViewWrite> out) throws Exception {
        long now = ctx.timerService().currentProcessingTime();
        Holder old = holders.get(u.engine);
        if (u.confirmed) {
            confirm(u, old, now, ctx, out);
        } else if (u.stored) {
            put(u, old, u.storedAtMs, u.expireAtMs, u.medium, now, ctx, out);
        } else if (old != null && old.epoch <= u.epoch) {
            // State clearing: the engine lost the block (evicted, cleared, restarted or dead).
            holders.remove(u.engine);
            emit(ctx.getCurrentKey(), old.tag, u.eventTimeMs, out);
            ctx.output(VIEW_CHANGES, change(ctx.getCurrentKey(), u.engine, ViewOp.REMOVE, 0, old, old.version + 1, u.eventTimeMs, u.cause));
        }
    }

    /** Records that the engine held this block when a request used it, unless the holder already says as much. */
    private void confirm(LocationUpdate u, Holder old, long now, Context ctx, Collector<ViewWrite> out) throws Exception {
        long usedAt = Math.min(u.storedAtMs, now);
        long lifetime = u.expireAtMs - u.storedAtMs;
        if (usedAt + lifetime <= now) {
            return; // its life ended before it got here
        }
        if (old != null && (old.epoch > u.epoch || old.epoch == u.epoch && usedAt - old.storedAtMs < Math.max(1, lifetime / 8))) {
            return;
        }
        put(u, old, usedAt, usedAt + lifetime, old == null ? null : old.medium, now, ctx, out);
    }

    /** The engine holds the block as of {@code seenAt} until {@code expireAt}: one holder, one expiry timer, one view write. */
    private void put(LocationUpdate u, Holder old, long seenAt, long expireAt, String medium, long now, Context ctx,
                     Collector<ViewWrite> out) throws Exception {
        Holder h = new Holder();
        h.storedAtMs = seenAt;
        h.epoch = u.epoch;
        h.expireAtMs = expireAt;
        h.medium = medium;
        h.tag = u.tag;
        h.version = old == null ? now : Math.max(now, old.version + 1);
        holders.put(u.engine, h);
        // A replaced holder's earlier expiry timer still fires; it finds this holder not yet expired and keeps it.
        ctx.timerService().registerProcessingTimeTimer(expireAt);
        emit(ctx.getCurrentKey(), u.tag, u.eventTimeMs, out);
        ctx.output(VIEW_CHANGES, change(ctx.getCurrentKey(), u.engine, ViewOp.UPSERT, 1.0, h, h.version, u.eventTimeMs, u.cause));
    }

    @Override
    public void processElement2(HotPrefix p, Context ctx, Collector<ViewWrite> out) throws Exception {
        p.holders = sortedHolders().keySet().toArray(new String[0]);
        ctx.output(HOT_PREFIXES, p);
    }

    // Timer path: one timer per holder expiry. Holders past their expiry leave; a block left with
    // no holder leaves the state entirely (MapState is empty, nothing else is kept).
    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<ViewWrite> out) throws Exception {
        List<Map.Entry<String, Holder>> expired = new ArrayList<>();
        for (Map.Entry<String, Holder> e : holders.entries()) {
            if (e.getValue().expireAtMs <= timestamp) {
                expired.add(e);
            }
        }
        if (expired.isEmpty()) {
            return;
        }
        for (Map.Entry<String, Holder> e : expired) {
            holders.remove(e.getKey());
            Holder h = e.getValue();
            ctx.output(VIEW_CHANGES, change(ctx.getCurrentKey(), e.getKey(), ViewOp.REMOVE, 0, h, h.version + 1, timestamp, "decayed"));
        }
        emit(ctx.getCurrentKey(), expired.get(0).getValue().tag, timestamp, out);
    }

    /** The block's whole holder list, sorted by engine so the same holders always give the same text. */
    private void emit(long block, long tag, long eventTimeMs, Collector<ViewWrite> out) throws Exception {
        TreeMap<String, Holder> sorted = sortedHolders();
        if (sorted.isEmpty()) {
            out.collect(ViewWrite.block(tag, block, null, 0, eventTimeMs));
            return;
        }
        StringBuilder value = new StringBuilder();
        long expireAt = 0;
        for (Map.Entry<String, Holder> e : sorted.entrySet()) {
            if (value.length() > 0) {
                value.append(',');
            }
            value.append(ViewLayout.holder(e.getKey(), e.getValue().storedAtMs, e.getValue().epoch));
            expireAt = Math.max(expireAt, e.getValue().expireAtMs);
        }
        out.collect(ViewWrite.block(tag, block, value.toString(), expireAt, eventTimeMs));
    }

    /** The current block's holders by engine id. */
    private TreeMap<String, Holder> sortedHolders() throws Exception {
        TreeMap<String, Holder> sorted = new TreeMap<>();
        for (Map.Entry<String, Holder> e : holders.entries()) {
            sorted.put(e.getKey(), e.getValue());
        }
        return sorted;
    }

    private static ViewChange change(long block, String engine, ViewOp op, double confidence, Holder h,
                                                       long version, long eventTimeMs, String cause) {
        return ViewChange.newBuilder()
                .setBlockHash(block).setEngineId(engine).setOp(op).setConfidence(confidence).setMedium(h.medium)
                .setVersion(version).setTsMs(eventTimeMs).setCause(cause).build();
    }
}
