package dev.kvrouter.jobs.view.model;

import dev.kvrouter.jobs.io.HotPrefix;
import dev.kvrouter.jobs.io.ImmutableValueSerializer;
import dev.kvrouter.jobs.io.ImmutableValueTypeInfo;
import dev.kvrouter.jobs.io.LocationUpdate;
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
 * What the prefix-location table reads by block: a location update, or a hot prefix asking for its
 * first block's holders. Both share the table's keyed input; its other input is the broadcast
 * request to write the view again ({@link ViewResync}). Location updates cross the job's busiest
 * edge: this wrapper has its own serializer too (a flag byte, then {@link LocationUpdate}'s).
 */
@TypeInfo(BlockInput.Factory.class)
public final class BlockInput {
    /** Null for a hot prefix. */
    public final LocationUpdate update;
    /** Null for a location update. */
    public final HotPrefix hotPrefix;

    private BlockInput(LocationUpdate update, HotPrefix hotPrefix) {
        this.update = update;
        this.hotPrefix = hotPrefix;
    }

    public static BlockInput of(LocationUpdate update) {
        return new BlockInput(update, null);
    }

    public static BlockInput of(HotPrefix hotPrefix) {
        return new BlockInput(null, hotPrefix);
    }

    /** The canonical block this input is about: the table's key. */
    public long block() {
        return update != null ? update.blockHash : hotPrefix.rootBlock;
    }

    @Override
    public String toString() {
        return update != null ? update.toString() : "hot prefix " + Long.toHexString(hotPrefix.rootBlock);
    }

    public static final class Factory extends TypeInfoFactory<BlockInput> {
        @Override
        public TypeInformation<BlockInput> createTypeInfo(Type t, Map<String, TypeInformation<?>> genericParameters) {
            return new ImmutableValueTypeInfo<>(BlockInput.class, Serializer.INSTANCE);
        }
    }

    public static final class Serializer extends ImmutableValueSerializer<BlockInput> {
        static final Serializer INSTANCE = new Serializer();

        @Override
        public BlockInput createInstance() {
            return new BlockInput(new LocationUpdate(), null);
        }

        @Override
        public void serialize(BlockInput in, DataOutputView out) throws IOException {
            out.writeBoolean(in.update != null);
            if (in.update != null) {
                LocationUpdate.Serializer.INSTANCE.serialize(in.update, out);
                return;
            }
            HotPrefix p = in.hotPrefix;
            out.writeLong(p.rootBlock);
            writeLongs(p.prefixBlocks, out);
            writeString(p.prefixClass, out);
            out.writeLong(p.requests);
            writeString(p.exemplarRequestId, out);
            out.writeLong(p.tsMs);
            out.writeBoolean(p.holders != null);
            if (p.holders != null) {
                out.writeInt(p.holders.length);
                for (String h : p.holders) {
                    writeString(h, out);
                }
            }
        }

        @Override
        public BlockInput deserialize(DataInputView in) throws IOException {
            if (in.readBoolean()) {
                return new BlockInput(LocationUpdate.Serializer.INSTANCE.deserialize(in), null);
            }
            HotPrefix p = new HotPrefix();
            p.rootBlock = in.readLong();
            p.prefixBlocks = readLongs(in);
            p.prefixClass = readString(in);
            p.requests = in.readLong();
            p.exemplarRequestId = readString(in);
            p.tsMs = in.readLong();
            if (in.readBoolean()) {
                p.holders = new String[in.readInt()];
                for (int i = 0; i < p.holders.length; i++) {
                    p.holders[i] = readString(in);
                }
            }
            return new BlockInput(null, p);
        }

        @Override
        public TypeSerializerSnapshot<BlockInput> snapshotConfiguration() {
            return new Snapshot();
        }
    }

    public static final class Snapshot extends SimpleTypeSerializerSnapshot<BlockInput> {
        public Snapshot() {
            super(() -> Serializer.INSTANCE);
        }
    }
}
