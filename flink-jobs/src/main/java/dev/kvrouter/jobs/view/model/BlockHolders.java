package dev.kvrouter.jobs.view.model;

import dev.kvrouter.jobs.io.ImmutableValueSerializer;
import dev.kvrouter.jobs.io.ImmutableValueTypeInfo;
import java.io.IOException;
import java.lang.reflect.Type;
import java.util.Arrays;
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

    /**
     * The first holder by engine id (null only in a value with none) and the others after it, in
     * order: most blocks have one holder, which then needs no array (one object less per entry for
     * the collector to copy).
     */
    private final Holder first;
    private final Holder[] rest;
    /**
     * The expiry timer the block keeps: at or before every holder's expiry, so one timer per block
     * suffices (0: none yet). A holder whose life is extended does not need a timer of its own.
     */
    public final long timerAtMs;

    public static final BlockHolders EMPTY = new BlockHolders(null, NONE, 0);

    private BlockHolders(Holder first, Holder[] rest, long timerAtMs) {
        this.first = first;
        this.rest = rest;
        this.timerAtMs = timerAtMs;
    }

    /** These holders, their timer now at {@code atMs}. */
    public BlockHolders withTimerAt(long atMs) {
        return new BlockHolders(first, rest, atMs);
    }

    /** How many engines hold the block. */
    public int size() {
        return first == null ? 0 : 1 + rest.length;
    }

    /** The {@code i}-th holder in engine order, {@code i} below {@link #size()}. */
    public Holder get(int i) {
        return i == 0 ? first : rest[i - 1];
    }

    /** The earliest expiry among the holders (Long.MAX_VALUE for none). */
    public long earliestExpiry() {
        long earliest = Long.MAX_VALUE;
        for (int i = 0; i < size(); i++) {
            earliest = Math.min(earliest, get(i).expireAtMs);
        }
        return earliest;
    }

    /** The engine's holder of this block, or null. */
    public Holder find(String engine) {
        int i = indexOf(engine);
        return i >= 0 ? get(i) : null;
    }

    /** These holders with {@code h} in place of the same engine's, or added. */
    public BlockHolders with(Holder h) {
        int i = indexOf(h.engine);
        if (i == 0 || first == null) {
            return new BlockHolders(h, rest, timerAtMs);
        }
        if (i > 0) {
            Holder[] next = rest.clone();
            next[i - 1] = h;
            return new BlockHolders(first, next, timerAtMs);
        }
        int at = -i - 1;
        Holder[] next = new Holder[rest.length + 1];
        if (at == 0) {
            // The new holder goes first; the old first leads the others.
            next[0] = first;
            System.arraycopy(rest, 0, next, 1, rest.length);
            return new BlockHolders(h, next, timerAtMs);
        }
        System.arraycopy(rest, 0, next, 0, at - 1);
        next[at - 1] = h;
        System.arraycopy(rest, at - 1, next, at, rest.length - (at - 1));
        return new BlockHolders(first, next, timerAtMs);
    }

    /** These holders without the engine's; {@link #EMPTY} when none is left. */
    public BlockHolders without(String engine) {
        int i = indexOf(engine);
        if (i < 0) {
            return this;
        }
        if (rest.length == 0) {
            return EMPTY;
        }
        if (i == 0) {
            return new BlockHolders(rest[0], rest.length == 1 ? NONE : Arrays.copyOfRange(rest, 1, rest.length), timerAtMs);
        }
        Holder[] next = rest.length == 1 ? NONE : new Holder[rest.length - 1];
        System.arraycopy(rest, 0, next, 0, i - 1);
        System.arraycopy(rest, i, next, i - 1, rest.length - i);
        return new BlockHolders(first, next, timerAtMs);
    }

    public boolean isEmpty() {
        return first == null;
    }

    /** Binary search by engine id: the index, or {@code -(insertion point) - 1}. */
    private int indexOf(String engine) {
        int low = 0;
        int high = size() - 1;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            int c = get(mid).engine.compareTo(engine);
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
            out.writeInt(b.size());
            out.writeLong(b.timerAtMs);
            for (int i = 0; i < b.size(); i++) {
                Holder.Serializer.INSTANCE.serialize(b.get(i), out);
            }
        }

        @Override
        public BlockHolders deserialize(DataInputView in) throws IOException {
            int n = in.readInt();
            long timerAtMs = in.readLong();
            if (n == 0 && timerAtMs == 0) {
                return EMPTY;
            }
            Holder first = n > 0 ? Holder.Serializer.INSTANCE.deserialize(in) : null;
            Holder[] rest = n > 1 ? new Holder[n - 1] : NONE;
            for (int i = 0; i < rest.length; i++) {
                rest[i] = Holder.Serializer.INSTANCE.deserialize(in);
            }
            return new BlockHolders(first, rest, timerAtMs);
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
