package dev.kvrouter.jobs.view.model;

/**
 * An engine gained or lost a canonical block. Produced per engine, consumed keyed by block.
 * The holder's expiry is decided by the engine side, which knows the engine's residency time.
 */
public class LocationUpdate {
    public long blockHash;
    /** Hash of the block's chain at the tag depth: the block's Redis group. */
    public long tag;
    public String engine;
    public boolean stored;
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

    @Override
    public String toString() {
        return (stored ? "store " : "remove ") + Long.toHexString(blockHash) + " on " + engine + " (" + cause + ")";
    }
}
