package dev.kvrouter.jobs.view.model;

/**
 * A request to write the whole view again from the job's state: Redis lost it (restarted empty,
 * failed over, flushed) or the job just started (a restored job's entries may have expired from
 * Redis while it was down). Broadcast to every instance of the prefix-location table.
 */
public class ViewResync {
    /** Why, for the log. */
    public String reason;
    /** When the loss was noticed, milliseconds since the Unix epoch. */
    public long atMs;

    public ViewResync() {}

    public static ViewResync of(String reason, long atMs) {
        ViewResync r = new ViewResync();
        r.reason = reason;
        r.atMs = atMs;
        return r;
    }

    @Override
    public String toString() {
        return "resync at " + atMs + ": " + reason;
    }
}
