package dev.kvrouter.jobs.view.model;

import dev.kvrouter.events.EngineHealth;
import dev.kvrouter.events.EngineRole;

/**
 * An engine as it should appear in the view and in the engine-state changelog.
 *
 * <p>State version 2 (the replica planner keeps the latest per engine): health and role are the Avro
 * enums. Version 1 kept them as strings in fields of other names, which a restore drops: an entry
 * restored from a version-1 savepoint has {@code currentHealth} null until the engine's next status
 * (within engine.update-interval) replaces it.
 */
public class EngineStatus {
    public String engine;
    /** Null only in an entry restored from a version-1 savepoint. */
    public EngineHealth currentHealth;
    public EngineHealth previousHealth;
    public String reason;
    public int waiting;
    public int running;
    /** Requests the engine runs at once, as learned; 0 unknown. */
    public int slots;
    public double kvUsage;
    /** Tokens the engine's KV cache had free at its last report; -1 unknown or not published (engine.kv-room). */
    public long kvFreeTokens = -1;
    public EngineRole servingRole = EngineRole.BOTH;
    public long residencyMs;
    public long epoch;
    public boolean unsynced;
    public long tsMs;
    /** When the engine measured {@code waiting} and {@code running}; 0 before its first load report. */
    public long loadAtMs;
    /** True when health changed (goes to the engine-state topic); false for a load refresh. */
    public boolean changed;

    public EngineStatus() {}
}
