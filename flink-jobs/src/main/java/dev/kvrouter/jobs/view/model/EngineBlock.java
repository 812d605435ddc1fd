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
 * What the pipeline knows of one engine block: the canonical blocks it completes and the chain
 * state after it, so the engine's next block (naming this one as parent) can be placed, and a
 * removal (engine hash only) can be applied. Never changed once stored (see
 * {@link ImmutableValueSerializer}).
 */
@TypeInfo(EngineBlock.Factory.class)
public class EngineBlock {
    /**
     * How many canonical blocks this engine block completes: one when the engine's block is the
     * canonical chunk (nearly always), none or one when the chunk is bigger, several when smaller.
     */
    private final int completed;
    /**
     * The first completed canonical hash and its Redis group tag, kept in the block itself: two
     * arrays per block were two more objects per entry for the collector to copy, for one value each.
     */
    private long firstCanonical;
    private long firstTag;
    /** From the second completed on: canonical hash, tag, canonical hash, tag, …; null unless completed > 1. */
    private final long[] more;
    /** Canonical hash of the last full chunk at the end of this block (the root when there is none yet). */
    public long chainTip;
    /** Full chunks in the chain up to chainTip. */
    public int depth;
    /** Hash at the tag depth once the chain reached it; 0 before. */
    public long anchor;
    /** Tokens after chainTip not yet making a full chunk. */
    public int[] partial;
    public long storedAtMs;

    /** No partial chunk: one array for every block that ends on a chunk boundary (values are never changed). */
    public static final int[] NO_PARTIAL = new int[0];

    public EngineBlock() {
        this(0);
    }

    /** A block completing {@code completed} canonical blocks, each recorded with {@link #complete}. */
    public EngineBlock(int completed) {
        this.completed = completed;
        this.more = completed > 1 ? new long[2 * (completed - 1)] : null;
    }

    /** How many canonical blocks this block completes. */
    public int completed() {
        return completed;
    }

    /** Records the {@code c}-th canonical hash this block completes (below {@link #completed()}) and its tag. */
    public void complete(int c, long canonical, long tag) {
        if (c == 0) {
            firstCanonical = canonical;
            firstTag = tag;
        } else {
            more[2 * (c - 1)] = canonical;
            more[2 * (c - 1) + 1] = tag;
        }
    }

    /** The {@code c}-th canonical hash this block completes, {@code c} below {@link #completed()}. */
    public long canonical(int c) {
        return c == 0 ? firstCanonical : more[2 * (c - 1)];
    }

    /** The Redis group tag of {@link #canonical(int)}. */
    public long tag(int c) {
        return c == 0 ? firstTag : more[2 * (c - 1) + 1];
    }

    public static final class Factory extends TypeInfoFactory<EngineBlock> {
        @Override
        public TypeInformation<EngineBlock> createTypeInfo(Type t, Map<String, TypeInformation<?>> genericParameters) {
            return new ImmutableValueTypeInfo<>(EngineBlock.class, Serializer.INSTANCE);
        }
    }

    public static final class Serializer extends ImmutableValueSerializer<EngineBlock> {
        static final Serializer INSTANCE = new Serializer();

        @Override
        public EngineBlock createInstance() {
            return new EngineBlock();
        }

        @Override
        public void serialize(EngineBlock b, DataOutputView out) throws IOException {
            // The layout two arrays were written in (canonical hashes, then tags, each with its count),
            // so state written before the first one moved inline restores as it was.
            out.writeInt(b.completed);
            for (int c = 0; c < b.completed; c++) {
                out.writeLong(b.canonical(c));
            }
            out.writeInt(b.completed);
            for (int c = 0; c < b.completed; c++) {
                out.writeLong(b.tag(c));
            }
            out.writeLong(b.chainTip);
            out.writeInt(b.depth);
            out.writeLong(b.anchor);
            writeInts(b.partial, out);
            out.writeLong(b.storedAtMs);
        }

        @Override
        public EngineBlock deserialize(DataInputView in) throws IOException {
            long[] canonical = readLongs(in);
            long[] tags = readLongs(in);
            int completed = canonical == null ? 0 : canonical.length; // null: never written since, read as none
            if (tags == null ? completed != 0 : tags.length != completed) {
                throw new IOException("engine block with " + completed + " canonical hashes but "
                        + (tags == null ? 0 : tags.length) + " tags");
            }
            EngineBlock b = new EngineBlock(completed);
            for (int c = 0; c < completed; c++) {
                b.complete(c, canonical[c], tags[c]);
            }
            b.chainTip = in.readLong();
            b.depth = in.readInt();
            b.anchor = in.readLong();
            b.partial = readInts(in);
            if (b.partial != null && b.partial.length == 0) {
                b.partial = NO_PARTIAL;
            }
            b.storedAtMs = in.readLong();
            return b;
        }

        @Override
        public TypeSerializerSnapshot<EngineBlock> snapshotConfiguration() {
            return new Snapshot();
        }
    }

    public static final class Snapshot extends SimpleTypeSerializerSnapshot<EngineBlock> {
        public Snapshot() {
            super(() -> Serializer.INSTANCE);
        }
    }
}
