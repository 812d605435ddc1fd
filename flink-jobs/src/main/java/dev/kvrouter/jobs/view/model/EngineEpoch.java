package dev.kvrouter.jobs.view.model;

/** What confirming a block on an engine needs to know of it: its cache epoch, since when, and an entry's life there. */
public class EngineEpoch {
    public long epoch;
    /** When the job first saw this epoch (processing time): a use before it was of the previous cache. */
    public long sinceMs;
    /** How long an entry confirmed now stays above the confidence floor, from the engine's residency. */
    public long lifetimeMs;

    public EngineEpoch() {}
}
