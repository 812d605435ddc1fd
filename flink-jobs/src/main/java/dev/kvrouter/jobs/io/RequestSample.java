package dev.kvrouter.jobs.io;

/**
 * What one completed request shows of its engine's speed. From its outcome: the prompt tokens the
 * engine computed (neither cached nor transferred) and how long that took (time to first token less
 * the queue wait). From its outcome joined with its decision: how long it held a sequence slot
 * (from its start to its end). A part not measured is 0.
 */
public class RequestSample {
    public String engine;
    public double prefillTokens;
    public double prefillMs;
    public double slotMs;
    /** When the request finished, in milliseconds since the Unix epoch. */
    public long atMs;

    public RequestSample() {}

    public static RequestSample prefill(String engine, double tokens, double ms, long atMs) {
        RequestSample s = new RequestSample();
        s.engine = engine;
        s.prefillTokens = tokens;
        s.prefillMs = ms;
        s.atMs = atMs;
        return s;
    }

    public static RequestSample slot(String engine, double slotMs, long atMs) {
        RequestSample s = new RequestSample();
        s.engine = engine;
        s.slotMs = slotMs;
        s.atMs = atMs;
        return s;
    }
}
