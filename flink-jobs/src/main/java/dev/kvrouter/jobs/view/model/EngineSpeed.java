package dev.kvrouter.jobs.view.model;

/**
 * An engine's recent work, each request's weight decaying with its age, as of {@code atMs}: prompt
 * tokens computed and the milliseconds they took (their ratio is the prefill rate), and the slot
 * time of the requests that finished (over their weight, the mean time a request holds a slot).
 */
public class EngineSpeed {
    public double prefillTokens;
    public double prefillMs;
    public double slotMs;
    public double slotRequests;
    public long atMs;

    public EngineSpeed() {}
}
