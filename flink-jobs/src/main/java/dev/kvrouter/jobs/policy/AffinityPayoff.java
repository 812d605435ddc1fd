package dev.kvrouter.jobs.policy;

import java.util.Optional;

/**
 * Whether a prefix class's affinity paid over a window: the prefill milliseconds its placements
 * saved (as the engines' cached tokens showed it) against the wait they added before a request
 * could start (the cost view of each decision). Nothing here turns affinity off: {@code kvr_pick}
 * prices every request by the same two figures, and takes a holder only where the weighted saving
 * outweighs the wait. A class that does not pay over a window means the prices were wrong for it (a
 * stale view, a weight to tune), which the {@code AFFINITY_NOT_PAYING} alert reports.
 *
 * @param minRequests windows with fewer requests that carried the cost view judge nothing
 */
public record AffinityPayoff(long minRequests) implements java.io.Serializable {

    public AffinityPayoff {
        if (minRequests < 1) {
            throw new IllegalArgumentException("minRequests must be at least 1");
        }
    }

    /**
     * What a window of one class measured.
     *
     * @param costKnown             requests whose decision carried the cost view
     * @param savedMsPerRequest     prefill they saved, per request
     * @param addedWaitMsPerRequest wait their placements added, per request
     */
    public record Window(long costKnown, double savedMsPerRequest, double addedWaitMsPerRequest) {}

    /** Whether affinity paid (saved at least the wait it added); empty when the window is too small to say. */
    public Optional<Boolean> paid(Window w) {
        if (w.costKnown() < minRequests) {
            return Optional.empty();
        }
        return Optional.of(w.savedMsPerRequest() >= w.addedWaitMsPerRequest());
    }
}
