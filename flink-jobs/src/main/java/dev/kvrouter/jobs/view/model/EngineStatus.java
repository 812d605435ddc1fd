package dev.kvrouter.jobs.view.model;

/** An engine as it should appear in the view and in the engine-state changelog. */
public class EngineStatus {
    public String engine;
    public String health;
    public String previous;
    public String reason;
    public int waiting;
    public int running;
    /** Requests the engine runs at once, as learned; 0 unknown. */
    public int slots;
    public double kvUsage;
    /** BOTH, PREFILL or DECODE. */
    public String role = "BOTH";
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
