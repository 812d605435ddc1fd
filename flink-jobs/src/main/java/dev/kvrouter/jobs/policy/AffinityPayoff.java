package dev.kvrouter.jobs.policy;

import java.util.Optional;

/**
 * Whether a prefix class's affinity paid over a window: the prefill milliseconds its placements
 * saved (as the engines' cached tokens showed it) against the wait they added before a request
 * could start (the cost view of each decision), weighed as {@code kvr_pick} weighs them. Nothing
 * here turns affinity off: the pick prices every request by the same two figures and takes a holder
 * only while {@code uncachedPrefillWeight} times the prefill it saves outweighs the wait it adds, so
 * with predictions that hold a class always pays. One that does not means the prices were wrong for
 * it (a stale view: predicted blocks not there), which the {@code AFFINITY_NOT_PAYING} alert reports.
 *
 * @param minRequests           windows with fewer requests that carried the cost view judge nothing
 * @param uncachedPrefillWeight how the pick weighs prefill against wait ({@code cost.uncached-prefill-weight})
 */
public record AffinityPayoff(long minRequests, double uncachedPrefillWeight) implements java.io.Serializable {

    public AffinityPayoff {
        if (minRequests < 1) {
            throw new IllegalArgumentException("minRequests must be at least 1");
        }
        if (!(uncachedPrefillWeight > 0) || Double.isInfinite(uncachedPrefillWeight)) {
            throw new IllegalArgumentException("uncachedPrefillWeight must be a positive number, was " + uncachedPrefillWeight);
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

    /** Whether affinity paid (its weighted saving at least the wait it added); empty when the window is too small to say. */
    public Optional<Boolean> paid(Window w) {
        if (w.costKnown() < minRequests) {
            return Optional.empty();
        }
        return Optional.of(uncachedPrefillWeight * w.savedMsPerRequest() >= w.addedWaitMsPerRequest());
    }
}
