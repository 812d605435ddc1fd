package dev.kvrouter.jobs.io;

/**
 * What one completed request shows of its engine's speed. From its outcome: the prompt tokens the
 * engine computed (neither cached nor transferred) and how long that took (time to first token less
 * the queue wait). From its outcome joined with its decision: how long it held a sequence slot
 * (from its start to its end). A part not measured is 0. Or, seconds before any outcome, what the
 * engine's own KV events show of a prefill in progress: one chunk's tokens and the time since the
 * chunk before it ({@link #pace}).
 */
public class RequestSample {
    public String engine;
    public double prefillTokens;
    public double prefillMs;
    public double slotMs;
    /** When the request finished (a pace sample: when the chunk was stored), in milliseconds since the Unix epoch. */
    public long atMs;
    /** From two consecutive chunks of one prefill in the engine's KV events rather than from an outcome. */
    public boolean fromKvEvents;

    public RequestSample() {}

    public static RequestSample prefill(String engine, double tokens, double ms, long atMs) {
        RequestSample s = new RequestSample();
        s.engine = engine;
        s.prefillTokens = tokens;
        s.prefillMs = ms;
        s.atMs = atMs;
        return s;
    }

    /** A chunk of a prefill in progress: {@code tokens} stored {@code ms} after the chunk before it. */
    public static RequestSample pace(String engine, double tokens, double ms, long atMs) {
        RequestSample s = prefill(engine, tokens, ms, atMs);
        s.fromKvEvents = true;
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
