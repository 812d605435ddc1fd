package dev.kvrouter.sim.policy;

import java.util.function.IntPredicate;

/** Load helpers every policy shares. */
final class Loads {

    private Loads() {}

    /** The least-loaded live engine among those {@code allowed}, lowest index on ties; -1 when none. */
    static int leastLoaded(FleetView fleet, IntPredicate allowed) {
        int best = -1;
        int bestLoad = Integer.MAX_VALUE;
        for (int e = 0; e < fleet.size(); e++) {
            if (fleet.alive(e) && allowed.test(e) && fleet.load(e) < bestLoad) {
                best = e;
                bestLoad = fleet.load(e);
            }
        }
        return best;
    }

    /** The least-loaded live engine, or engine 0 when the whole fleet is down (the request then fails there). */
    static int leastLoaded(FleetView fleet) {
        int e = leastLoaded(fleet, x -> true);
        return e < 0 ? 0 : e;
    }

    /** Mean load of the live engines. */
    static double mean(FleetView fleet) {
        double sum = 0;
        int n = 0;
        for (int e = 0; e < fleet.size(); e++) {
            if (fleet.alive(e)) {
                sum += fleet.load(e);
                n++;
            }
        }
        return n == 0 ? 0 : sum / n;
    }
}
