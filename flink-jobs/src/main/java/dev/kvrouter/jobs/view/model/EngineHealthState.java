package dev.kvrouter.jobs.view.model;

import dev.kvrouter.events.EngineHealth;
import dev.kvrouter.events.EngineLifecycle;
import dev.kvrouter.events.EngineRole;

/**
 * Everything the job keeps about one engine besides its blocks.
 *
 * <p>State version 2: health, lifecycle and role are the Avro enums. Version 1 kept them as strings
 * in {@code health}, {@code lifecycle} and {@code role}; a state restored from a version-1 savepoint
 * has the enum fields null until {@link #upgrade()} carries the strings over. The enum fields have no
 * initializer on purpose: Flink restores a POJO into an instance of its no-argument constructor, and
 * a default there would hide the restored string. New state comes from {@link #fresh(double)}.
 */
public class EngineHealthState {
    /** The engine's health as the job judges it. */
    public EngineHealth currentHealth;
    /** The lifecycle the engine last reported of itself. */
    public EngineLifecycle reportedLifecycle;
    /** BOTH, or PREFILL / DECODE under disaggregated serving, as the engine last reported. */
    public EngineRole servingRole;
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
    /** Tokens per engine block, from its BlockStored events; 0 before the first (the view's chunk size is assumed). */
    public int blockTokens;
    /** Learned store-to-remove lifetime, ms (before memory pressure). */
    public double residencyMs;
    /** Until when (processing time) the engine counts as unsynced after a sequence gap; 0 when synced. */
    public long unsyncedUntilMs;
    public long blockCount;
    /**
     * The key ({@code Validation.engineHashKey}) of the block the engine's last {@code BlockStored}
     * ended on; 0 when none. A {@code BlockStored} whose parent is that block continues what the
     * engine was storing: under chunked prefill, the same prompt's next chunk.
     */
    public long lastStoredKey;
    /**
     * The engine was taken for dead: its entries left the view, but its chains (the blocks' state) are
     * kept until it is forgotten, so that a batch continuing its sequence (the same process, its cache
     * as it was: a stall past engine.stall-limit) can index them again.
     */
    public boolean parked;
        /** The processing-time timer pending for liveness checks; 0 when none. */
    public long nextCheckMs;
    /** When the engine entry was last published, to throttle load-only updates. */
    public long publishedAtMs;

    /** State version 1's health; null once upgraded. Goes with the next state version. */
    @Deprecated
    public String health;
    /** State version 1's lifecycle; null once upgraded. Goes with the next state version. */
    @Deprecated
    public String lifecycle;
    /** State version 1's role; null once upgraded. Goes with the next state version. */
    @Deprecated
    public String role;

    public EngineHealthState() {}

    /** An engine not heard from before: health and lifecycle unknown, unified serving, the given residency. */
    public static EngineHealthState fresh(double residencyMs) {
        EngineHealthState h = new EngineHealthState();
        h.currentHealth = EngineHealth.UNKNOWN;
        h.reportedLifecycle = EngineLifecycle.UNKNOWN;
        h.servingRole = EngineRole.BOTH;
        h.residencyMs = residencyMs;
        return h;
    }

    /** Carries a version-1 state's strings over to the enum fields (once; a version-2 state is returned as it is). */
    @SuppressWarnings("deprecation")
    public EngineHealthState upgrade() {
        if (currentHealth == null) {
            currentHealth = health == null ? EngineHealth.UNKNOWN : EngineHealth.valueOf(health);
            reportedLifecycle = lifecycle == null ? EngineLifecycle.UNKNOWN : EngineLifecycle.valueOf(lifecycle);
            servingRole = role == null ? EngineRole.BOTH : EngineRole.valueOf(role);
            health = null;
            lifecycle = null;
            role = null;
        }
        return this;
    }
}
