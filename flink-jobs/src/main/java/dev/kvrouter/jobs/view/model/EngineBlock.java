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
    /** Canonical hashes completed within this engine block (usually one; none when the chunk is bigger). */
    public long[] canonical;
    /** The Redis group tag of each canonical hash, same order. */
    public long[] tags;
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

    public EngineBlock() {}

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
            writeLongs(b.canonical, out);
            writeLongs(b.tags, out);
            out.writeLong(b.chainTip);
            out.writeInt(b.depth);
            out.writeLong(b.anchor);
            writeInts(b.partial, out);
            out.writeLong(b.storedAtMs);
        }

        @Override
        public EngineBlock deserialize(DataInputView in) throws IOException {
            EngineBlock b = new EngineBlock();
            b.canonical = readLongs(in);
            b.tags = readLongs(in);
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
