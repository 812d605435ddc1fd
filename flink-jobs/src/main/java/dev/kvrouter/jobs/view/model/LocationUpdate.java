package dev.kvrouter.jobs.view.model;

/**
 * An engine gained or lost a canonical block, or was seen using one. Produced per engine (and, for
 * confirmations, from request outcomes), consumed keyed by block. A stored holder's expiry is
 * decided by the engine side, which knows the engine's residency time.
 */
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

    @Override
    public String toString() {
        return (stored ? "store " : confirmed ? "confirm " : "remove ") + Long.toHexString(blockHash) + " on " + engine + " (" + cause + ")";
    }
}
