package dev.kvrouter.jobs.policy;

/**
 * Affinity on or off for a prefix class, with hysteresis: off when the windowed hit rate falls
 * below {@code offBelow}, on again only once it climbs above {@code onAbove} (> offBelow), so a
 * class near the threshold does not flap every window. Windows with fewer than {@code minRequests}
 * leave the state as it is.
 */
public record AffinitySwitch(double offBelow, double onAbove, long minRequests) implements java.io.Serializable {

    public AffinitySwitch {
        if (!(offBelow >= 0 && onAbove > offBelow && onAbove <= 1)) {
            throw new IllegalArgumentException("need 0 <= offBelow < onAbove <= 1, got " + offBelow + " and " + onAbove);
        }
        if (minRequests < 1) {
            throw new IllegalArgumentException("minRequests must be at least 1");
        }
    }

    /** The next state after a window with {@code hits} of {@code requests}. */
    public boolean next(boolean on, long hits, long requests) {
        if (requests < minRequests) {
            return on;
        }
        double rate = (double) hits / requests;
        return on ? rate >= offBelow : rate > onAbove;
    }
}
