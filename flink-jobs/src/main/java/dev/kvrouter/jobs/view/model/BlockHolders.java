package dev.kvrouter.jobs.view.model;

import dev.kvrouter.jobs.io.ImmutableValueSerializer;
import dev.kvrouter.jobs.io.ImmutableValueTypeInfo;
import java.io.IOException;
import java.lang.reflect.Type;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.TypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInfoFactory;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The engines holding one canonical block, sorted by engine id: one state value per block rather
 * than a map per block (a block has one to a few holders; a map per block cost a hash table, its
 * entries and a lookup each per holder). Never changed once stored: {@link #with} and
 * {@link #without} return a new value (see {@link ImmutableValueSerializer}).
 */
@TypeInfo(BlockHolders.Factory.class)
public final class BlockHolders {
    private static final Holder[] NONE = new Holder[0];

    /** Sorted by {@link Holder#engine}; empty only for {@link #EMPTY} (a block with no holder has no state). */
    public final Holder[] holders;
    /**
     * The expiry timer the block keeps: at or before every holder's expiry, so one timer per block
     * suffices (0: none yet). A holder whose life is extended does not need a timer of its own.
     */
    public final long timerAtMs;

    public static final BlockHolders EMPTY = new BlockHolders(NONE, 0);

    private BlockHolders(Holder[] holders, long timerAtMs) {
        this.holders = holders;
        this.timerAtMs = timerAtMs;
    }

    /** These holders, their timer now at {@code atMs}. */
    public BlockHolders withTimerAt(long atMs) {
        return new BlockHolders(holders, atMs);
    }

    /** The earliest expiry among the holders (Long.MAX_VALUE for none). */
    public long earliestExpiry() {
        long earliest = Long.MAX_VALUE;
        for (Holder h : holders) {
            earliest = Math.min(earliest, h.expireAtMs);
        }
        return earliest;
    }

    /** The engine's holder of this block, or null. */
    public Holder find(String engine) {
        int i = indexOf(engine);
        return i >= 0 ? holders[i] : null;
    }

    /** These holders with {@code h} in place of the same engine's, or added. */
    public BlockHolders with(Holder h) {
        int i = indexOf(h.engine);
        Holder[] next;
        if (i >= 0) {
            next = holders.clone();
            next[i] = h;
        } else {
            int at = -i - 1;
            next = new Holder[holders.length + 1];
            System.arraycopy(holders, 0, next, 0, at);
            next[at] = h;
            System.arraycopy(holders, at, next, at + 1, holders.length - at);
        }
        return new BlockHolders(next, timerAtMs);
    }

    /** These holders without the engine's; {@link #EMPTY} when none is left. */
    public BlockHolders without(String engine) {
        int i = indexOf(engine);
        if (i < 0) {
            return this;
        }
        if (holders.length == 1) {
            return EMPTY;
        }
        Holder[] next = new Holder[holders.length - 1];
        System.arraycopy(holders, 0, next, 0, i);
        System.arraycopy(holders, i + 1, next, i, holders.length - i - 1);
        return new BlockHolders(next, timerAtMs);
    }

    public boolean isEmpty() {
        return holders.length == 0;
    }

    /** Binary search by engine id: the index, or {@code -(insertion point) - 1}. */
    private int indexOf(String engine) {
        int low = 0;
        int high = holders.length - 1;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            int c = holders[mid].engine.compareTo(engine);
            if (c < 0) {
                low = mid + 1;
            } else if (c > 0) {
                high = mid - 1;
            } else {
                return mid;
            }
        }
        return -(low + 1);
    }

    public static final class Factory extends TypeInfoFactory<BlockHolders> {
        @Override
        public TypeInformation<BlockHolders> createTypeInfo(Type t, Map<String, TypeInformation<?>> genericParameters) {
            return new ImmutableValueTypeInfo<>(BlockHolders.class, Serializer.INSTANCE);
        }
    }

    public static final class Serializer extends ImmutableValueSerializer<BlockHolders> {
        static final Serializer INSTANCE = new Serializer();

        @Override
        public BlockHolders createInstance() {
            return EMPTY;
        }

        @Override
        public void serialize(BlockHolders b, DataOutputView out) throws IOException {
            out.writeInt(b.holders.length);
            out.writeLong(b.timerAtMs);
            for (Holder h : b.holders) {
                Holder.Serializer.INSTANCE.serialize(h, out);
            }
        }

        @Override
        public BlockHolders deserialize(DataInputView in) throws IOException {
            int n = in.readInt();
            long timerAtMs = in.readLong();
            if (n == 0 && timerAtMs == 0) {
                return EMPTY;
            }
            Holder[] holders = new Holder[n];
            for (int i = 0; i < n; i++) {
                holders[i] = Holder.Serializer.INSTANCE.deserialize(in);
            }
            return new BlockHolders(holders, timerAtMs);
        }

        @Override
        public TypeSerializerSnapshot<BlockHolders> snapshotConfiguration() {
            return new Snapshot();
        }
    }

    public static final class Snapshot extends SimpleTypeSerializerSnapshot<BlockHolders> {
        public Snapshot() {
            super(() -> Serializer.INSTANCE);
        }
    }
}
