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
 * One engine holding one canonical block, in the prefix-location table. Never changed once stored
 * (a new holder replaces it; see {@link ImmutableValueSerializer}).
 */
@TypeInfo(Holder.Factory.class)
public class Holder {
    public String engine;
    public long storedAtMs;
    public long epoch;
    public long expireAtMs;
    public String medium;
    public long version;
    /** The block's Redis group tag (the same for every holder of a block). */
    public long tag;

    public Holder() {}

    public static final class Factory extends TypeInfoFactory<Holder> {
        @Override
        public TypeInformation<Holder> createTypeInfo(Type t, Map<String, TypeInformation<?>> genericParameters) {
            return new ImmutableValueTypeInfo<>(Holder.class, Serializer.INSTANCE);
        }
    }

    public static final class Serializer extends ImmutableValueSerializer<Holder> {
        static final Serializer INSTANCE = new Serializer();

        @Override
        public Holder createInstance() {
            return new Holder();
        }

        @Override
        public void serialize(Holder h, DataOutputView out) throws IOException {
            writeString(h.engine, out);
            out.writeLong(h.storedAtMs);
            out.writeLong(h.epoch);
            out.writeLong(h.expireAtMs);
            writeString(h.medium, out);
            out.writeLong(h.version);
            out.writeLong(h.tag);
        }

        @Override
        public Holder deserialize(DataInputView in) throws IOException {
            Holder h = new Holder();
            h.engine = readName(in);
            h.storedAtMs = in.readLong();
            h.epoch = in.readLong();
            h.expireAtMs = in.readLong();
            h.medium = readName(in);
            h.version = in.readLong();
            h.tag = in.readLong();
            return h;
        }

        @Override
        public TypeSerializerSnapshot<Holder> snapshotConfiguration() {
            return new Snapshot();
        }
    }

    public static final class Snapshot extends SimpleTypeSerializerSnapshot<Holder> {
        public Snapshot() {
            super(() -> Serializer.INSTANCE);
        }
    }
}
