package dev.kvrouter.bridge;

import java.util.HashMap;
import java.util.Map;

/**
 * What may wait in the bridge's queue to Kafka. Batches and dead letters share a bound in records
 * ({@code queue.capacity}) and one in serialized bytes ({@code queue.max-bytes}: a batch can be
 * megabytes, so a count alone bounds nothing); each engine's batches, a second one
 * ({@code queue.engine-max-bytes}), so that one engine's flood is dropped at its share while the
 * others' batches still go in. Load reports — the engines' heartbeats, a few hundred bytes each —
 * have room of their own ({@code loadCapacity} records) that no batch flood takes. Thread-safe: the
 * engines' threads admit, the sender releases.
 */
final class OutboxBudget {

    enum Kind { BATCH, LOAD, DEAD_LETTER }

    private final int capacity;
    private final long maxBytes;
    private final long engineMaxBytes;
    private final int loadCapacity;
    private int records;
    private long bytes;
    private int loads;
    /** Bytes of batches queued per engine; an engine with none queued has no entry. */
    private final Map<String, Long> engineBytes = new HashMap<>();

    OutboxBudget(int capacity, long maxBytes, long engineMaxBytes, int loadCapacity) {
        this.capacity = capacity;
        this.maxBytes = maxBytes;
        this.engineMaxBytes = engineMaxBytes;
        this.loadCapacity = loadCapacity;
    }

    /** Whether a record of this size would be refused now, before it is serialized (its size unknown: one byte). */
    synchronized boolean full(Kind kind, String engine) {
        return !fits(kind, engine, 1);
    }

    /** Takes room for a record of {@code size} serialized bytes; false (nothing taken) when it does not fit. */
    synchronized boolean tryAdmit(Kind kind, String engine, long size) {
        if (!fits(kind, engine, size)) {
            return false;
        }
        if (kind == Kind.LOAD) {
            loads++;
            return true;
        }
        records++;
        bytes += size;
        if (kind == Kind.BATCH) {
            engineBytes.merge(engine, size, Long::sum);
        }
        return true;
    }

    /** Gives back the room of a record taken off the queue (sent, or dropped while closing). */
    synchronized void release(Kind kind, String engine, long size) {
        if (kind == Kind.LOAD) {
            loads--;
            return;
        }
        records--;
        bytes -= size;
        if (kind == Kind.BATCH) {
            engineBytes.computeIfPresent(engine, (e, b) -> b > size ? b - size : null); // an engine with nothing queued leaves the map
        }
    }

    private boolean fits(Kind kind, String engine, long size) {
        if (kind == Kind.LOAD) {
            return loads < loadCapacity;
        }
        if (records >= capacity || bytes + size > maxBytes) {
            return false;
        }
        return kind != Kind.BATCH || engineBytes.getOrDefault(engine, 0L) + size <= engineMaxBytes;
    }

    synchronized long queuedBytes() {
        return bytes;
    }

    synchronized int queuedRecords() {
        return records + loads;
    }

    synchronized int enginesQueued() {
        return engineBytes.size();
    }
}
