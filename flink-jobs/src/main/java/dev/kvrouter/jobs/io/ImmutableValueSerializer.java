package dev.kvrouter.jobs.io;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * A hand-written serializer for a state value (or a record) the job never changes once stored
 * or emitted (a new value replaces it instead). Copying is then free: the heap backend copies a
 * state entry on first access during every asynchronous snapshot, and for an engine's block map
 * that meant copying every block, field by field through reflection, while the pipeline waited.
 * Writing fields directly also keeps the snapshot's own serialization, and a busy network edge,
 * short on a busy machine.
 */
public abstract class ImmutableValueSerializer<T> extends TypeSerializerSingleton<T> {

    @Override
    public final boolean isImmutableType() {
        return true;
    }

    @Override
    public final T copy(T from) {
        return from;
    }

    @Override
    public final T copy(T from, T reuse) {
        return from;
    }

    @Override
    public final int getLength() {
        return -1;
    }

    @Override
    public final T deserialize(T reuse, DataInputView source) throws IOException {
        return deserialize(source);
    }

    @Override
    public final void copy(DataInputView source, DataOutputView target) throws IOException {
        serialize(deserialize(source), target);
    }

    protected static void writeLongs(long[] values, DataOutputView out) throws IOException {
        if (values == null) {
            out.writeInt(-1);
            return;
        }
        out.writeInt(values.length);
        for (long v : values) {
            out.writeLong(v);
        }
    }

    protected static long[] readLongs(DataInputView in) throws IOException {
        int n = in.readInt();
        if (n < 0) {
            return null;
        }
        long[] values = new long[n];
        for (int i = 0; i < n; i++) {
            values[i] = in.readLong();
        }
        return values;
    }

    protected static void writeInts(int[] values, DataOutputView out) throws IOException {
        if (values == null) {
            out.writeInt(-1);
            return;
        }
        out.writeInt(values.length);
        for (int v : values) {
            out.writeInt(v);
        }
    }

    protected static int[] readInts(DataInputView in) throws IOException {
        int n = in.readInt();
        if (n < 0) {
            return null;
        }
        int[] values = new int[n];
        for (int i = 0; i < n; i++) {
            values[i] = in.readInt();
        }
        return values;
    }

    protected static void writeString(String s, DataOutputView out) throws IOException {
        out.writeBoolean(s != null);
        if (s != null) {
            out.writeUTF(s);
        }
    }

    protected static String readString(DataInputView in) throws IOException {
        return in.readBoolean() ? in.readUTF() : null;
    }

    /**
     * A string that names one of few things (an engine, a storage medium) as the JVM's one copy of
     * it ({@link String#intern}): a holder kept in state for every block then shares it instead of
     * owning two strings, which the collector copies and marks for as long as the block is held.
     */
    protected static String readName(DataInputView in) throws IOException {
        String name = readString(in);
        return name == null ? null : name.intern();
    }

    /**
     * A string of any length as its UTF-8 bytes, or null: one bulk copy each way for the ASCII text
     * of the view's keys and values, where writeUTF (and Flink's StringValue, with a thread-local
     * buffer per read) go character by character and writeUTF stops at 64 KB.
     */
    protected static void writeText(String s, DataOutputView out) throws IOException {
        if (s == null) {
            out.writeInt(-1);
            return;
        }
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(bytes.length);
        out.write(bytes);
    }

    protected static String readText(DataInputView in) throws IOException {
        int n = in.readInt();
        if (n < 0) {
            return null;
        }
        byte[] bytes = new byte[n];
        in.readFully(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
