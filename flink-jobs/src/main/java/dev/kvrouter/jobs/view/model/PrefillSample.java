package dev.kvrouter.jobs.view.model;

/**
 * One completed request's prefill, as its outcome tells it: the prompt tokens the engine computed
 * (not cached, not transferred) and how long that took (time to first token less the queue wait).
 */
public class PrefillSample {
    public String engine;
    public double tokens;
    public double ms;
    /** When the request finished, in milliseconds since the Unix epoch. */
    public long atMs;

    public PrefillSample() {}

    public PrefillSample(String engine, double tokens, double ms, long atMs) {
        this.engine = engine;
        this.tokens = tokens;
        this.ms = ms;
        this.atMs = atMs;
    }
}
