package dev.kvrouter.jobs.view.model;

/**
 * An engine's recent prefill work: tokens computed and milliseconds spent, each sample's weight
 * decaying with its age, as of {@code atMs}. Their ratio is the rate the engine prefills at now.
 */
public class PrefillRate {
    public double tokens;
    public double ms;
    public long atMs;

    public PrefillRate() {}
}
