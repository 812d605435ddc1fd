package dev.kvrouter.jobs.view.model;

/** Everything the job keeps about one engine besides its blocks. */
public class EngineHealthState {
    public String health = "UNKNOWN";
    public long epoch;
    /** Last sequence number applied; -1 before the first batch. */
    public long lastSeq = -1;
    /** The engine's timestamp on the last batch applied: a sequence at or below {@code lastSeq} with a later one is a restart. */
    public long lastBatchTsMs;
    public long lastSeenMs;
    /** When the engine measured the load it last reported (the report's time, never later than the job's clock). */
    public long loadAtMs;
    public int waiting;
    public int running;
    /**
     * Requests the engine runs at once, learned: the most it was running while others waited (a
     * request placed beyond it waits for one to finish); 0 until the engine was first seen full.
     */
    public int slots;
    public long kvUsed;
    public long kvCapacity;
    public String lifecycle = "UNKNOWN";
    /** BOTH, or PREFILL / DECODE under disaggregated serving, as the engine last reported. */
    public String role = "BOTH";
    /** Learned store-to-remove lifetime, ms (before memory pressure). */
    public double residencyMs;
    /** Until when (processing time) the engine counts as unsynced after a sequence gap; 0 when synced. */
    public long unsyncedUntilMs;
    public long blockCount;
    /** The processing-time timer pending for liveness checks; 0 when none. */
    public long nextCheckMs;
    /** When the engine entry was last published, and what it said, to throttle load-only updates. */
    public long publishedAtMs;
    public String publishedHealth = "";

    public EngineHealthState() {}
}
