package dev.kvrouter.jobs.io;

import dev.kvrouter.redis.ViewWrite;
import java.io.IOException;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The stream type of every write to the Redis view. Each of them crosses the network once, from the
 * operator that makes it to a Redis sink (the view's takes a union of the table's, the engine
 * table's and the fleet's writes; the ratios' another): written field by field here rather than
 * through the POJO serializer's reflection and boxed longs, which took 6 % of the table's thread and
 * 13 % of the sink's in a profile (BENCHMARKS.md, "Ingest"). The view's operators name this type
 * ({@code .returns(ViewWriteType.INFO)}); {@link ViewWrite} itself stays free of Flink.
 */
public final class ViewWriteType {

    public static final TypeInformation<ViewWrite> INFO = new ImmutableValueTypeInfo<>(ViewWrite.class, Serializer.INSTANCE);

    private static final ViewWrite.Kind[] KINDS = ViewWrite.Kind.values();

    private ViewWriteType() {}

    /** A write is never changed once emitted (the sink keeps or replaces it whole). */
    public static final class Serializer extends ImmutableValueSerializer<ViewWrite> {
        static final Serializer INSTANCE = new Serializer();

        @Override
        public ViewWrite createInstance() {
            return new ViewWrite();
        }

        // Text of any length (a block's holder list, or a client's engines, grows with the fleet).
        @Override
        public void serialize(ViewWrite w, DataOutputView out) throws IOException {
            out.writeByte(w.kind == null ? -1 : w.kind.ordinal());
            out.writeLong(w.tag);
            writeText(w.field, out);
            writeText(w.value, out);
            out.writeLong(w.expireAtMs);
            out.writeLong(w.eventTimeMs);
        }

        @Override
        public ViewWrite deserialize(DataInputView in) throws IOException {
            ViewWrite w = new ViewWrite();
            byte kind = in.readByte();
            w.kind = kind < 0 ? null : KINDS[kind];
            w.tag = in.readLong();
            w.field = readText(in);
            w.value = readText(in);
            w.expireAtMs = in.readLong();
            w.eventTimeMs = in.readLong();
            return w;
        }

        @Override
        public TypeSerializerSnapshot<ViewWrite> snapshotConfiguration() {
            return new Snapshot();
        }
    }

    public static final class Snapshot extends SimpleTypeSerializerSnapshot<ViewWrite> {
        public Snapshot() {
            super(() -> Serializer.INSTANCE);
        }
    }
}
