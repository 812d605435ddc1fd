package dev.kvrouter.jobs.io;

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
 * An engine gained or lost a canonical block, or was seen using one. Produced per engine (and, for
 * confirmations, from request outcomes), consumed keyed by block. A stored holder's expiry is
 * decided by the engine side, which knows the engine's residency time.
 *
 * <p>One record per block entry crosses the network between the engine and the block operators,
 * the job's busiest edge: it has its own serializer (fields written directly, no reflection), and
 * is never changed once emitted (see {@link ImmutableValueSerializer}).
 */
@TypeInfo(LocationUpdate.Factory.class)
public class LocationUpdate {
    public long blockHash;
    /** Hash of the block's chain at the tag depth: the block's Redis group. */
    public long tag;
    public String engine;
    public boolean stored;
    /**
     * A request on {@code engine} found this block cached at {@code storedAtMs}: an engine reuses a
     * cached block without storing it again, so only its outcome says it is still there.
     */
    public boolean confirmed;
    public long storedAtMs;
    public long epoch;
    public long expireAtMs;
    public String medium;
    public long eventTimeMs;
    public String cause;

    public LocationUpdate() {}

    public static LocationUpdate store(long blockHash, long tag, String engine, long storedAtMs, long epoch, long expireAtMs,
                                       String medium, long eventTimeMs) {
        LocationUpdate u = new LocationUpdate();
        u.blockHash = blockHash;
        u.tag = tag;
        u.engine = engine;
        u.stored = true;
        u.storedAtMs = storedAtMs;
        u.epoch = epoch;
        u.expireAtMs = expireAtMs;
        u.medium = medium;
        u.eventTimeMs = eventTimeMs;
        u.cause = "stored";
        return u;
    }

    public static LocationUpdate remove(long blockHash, long tag, String engine, long epoch, long eventTimeMs, String cause) {
        LocationUpdate u = new LocationUpdate();
        u.blockHash = blockHash;
        u.tag = tag;
        u.engine = engine;
        u.stored = false;
        u.epoch = epoch;
        u.eventTimeMs = eventTimeMs;
        u.cause = cause;
        return u;
    }

    /**
     * The engine served a request from this cached block at {@code usedAtMs}: the holder is there as
     * of then. Epoch and expiry are 0 until {@code UseConfirmer} stamps them from the engine's status.
     */
    public static LocationUpdate confirm(long blockHash, long tag, String engine, long usedAtMs, long epoch, long expireAtMs) {
        LocationUpdate u = store(blockHash, tag, engine, usedAtMs, epoch, expireAtMs, null, usedAtMs);
        u.stored = false;
        u.confirmed = true;
        u.cause = "confirmed";
        return u;
    }

    public static final class Factory extends TypeInfoFactory<LocationUpdate> {
        @Override
        public TypeInformation<LocationUpdate> createTypeInfo(Type t, Map<String, TypeInformation<?>> genericParameters) {
            return new ImmutableValueTypeInfo<>(LocationUpdate.class, Serializer.INSTANCE);
        }
    }

    public static final class Serializer extends ImmutableValueSerializer<LocationUpdate> {
        public static final Serializer INSTANCE = new Serializer();

        @Override
        public LocationUpdate createInstance() {
            return new LocationUpdate();
        }

        @Override
        public void serialize(LocationUpdate u, DataOutputView out) throws IOException {
            out.writeLong(u.blockHash);
            out.writeLong(u.tag);
            writeString(u.engine, out);
            out.writeByte((u.stored ? 1 : 0) | (u.confirmed ? 2 : 0));
            out.writeLong(u.storedAtMs);
            out.writeLong(u.epoch);
            out.writeLong(u.expireAtMs);
            writeString(u.medium, out);
            out.writeLong(u.eventTimeMs);
            writeString(u.cause, out);
        }

        @Override
        public LocationUpdate deserialize(DataInputView in) throws IOException {
            LocationUpdate u = new LocationUpdate();
            u.blockHash = in.readLong();
            u.tag = in.readLong();
            u.engine = readName(in);
            int flags = in.readByte();
            u.stored = (flags & 1) != 0;
            u.confirmed = (flags & 2) != 0;
            u.storedAtMs = in.readLong();
            u.epoch = in.readLong();
            u.expireAtMs = in.readLong();
            u.medium = readName(in);
            u.eventTimeMs = in.readLong();
            u.cause = readString(in);
            return u;
        }

        @Override
        public TypeSerializerSnapshot<LocationUpdate> snapshotConfiguration() {
            return new Snapshot();
        }
    }

    public static final class Snapshot extends SimpleTypeSerializerSnapshot<LocationUpdate> {
        public Snapshot() {
            super(() -> Serializer.INSTANCE);
        }
    }

    @Override
    public String toString() {
        return (stored ? "store " : confirmed ? "confirm " : "remove ") + Long.toHexString(blockHash) + " on " + engine + " (" + cause + ")";
    }
}
