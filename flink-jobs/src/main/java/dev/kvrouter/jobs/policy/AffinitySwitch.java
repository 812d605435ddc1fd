package dev.kvrouter.jobs.policy;

/**
 * Affinity on or off for a prefix class, with hysteresis, judged on what affinity earns or would
 * earn, never on what it earned while off:
 * <ul>
 *   <li>on: off when the window's hit rate (requests that found a cached block) falls below
 *       {@code offBelow};</li>
 *   <li>off: the requests were placed on load alone, so their hits say nothing about affinity. Each
 *       decision still says what the view's best holder matched (the counterfactual); affinity comes
 *       back once the share of requests whose best holder matched a block climbs above
 *       {@code onAbove} (> offBelow). A truly one-shot class has no holder to match and stays off.
 *       From balancers that do not say (no counterfactual), the hit rate is used as before.</li>
 * </ul>
 * Windows with fewer than {@code minRequests} (counted on the measure in use) leave the state as it is.
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

    /**
     * What a window of one class measured.
     *
     * @param requests        joined requests
     * @param hits            of them, those that found at least one cached block
     * @param wouldMatch      of those whose decision said what the best holder matched, those with a block matched
     * @param wouldMatchKnown requests whose decision said what the best holder matched
     */
    public record Window(long requests, long hits, long wouldMatch, long wouldMatchKnown) {}

    /** The next state after a window. */
    public boolean next(boolean on, Window w) {
        if (on || w.wouldMatchKnown() == 0) {
            if (w.requests() < minRequests) {
                return on;
            }
            double rate = (double) w.hits() / w.requests();
            return on ? rate >= offBelow : rate > onAbove;
        }
        if (w.wouldMatchKnown() < minRequests) {
            return false;
        }
        return (double) w.wouldMatch() / w.wouldMatchKnown() > onAbove;
    }

    /** The rate the decision for a window in state {@code on} rests on (the hit rate, or off: the counterfactual). */
    public double evidence(boolean on, Window w) {
        if (on || w.wouldMatchKnown() == 0) {
            return w.requests() == 0 ? 0 : (double) w.hits() / w.requests();
        }
        return (double) w.wouldMatch() / w.wouldMatchKnown();
    }
}
