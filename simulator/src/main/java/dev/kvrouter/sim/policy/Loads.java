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

    /** The live engines' loads: how many, the lowest and highest, their mean and standard deviation (all 0 with none live). */
    record Spread(int live, int min, int max, double mean, double stddev) {}

    static Spread spread(FleetView fleet) {
        int n = 0;
        int min = Integer.MAX_VALUE;
        int max = Integer.MIN_VALUE;
        double sum = 0;
        for (int e = 0; e < fleet.size(); e++) {
            if (fleet.alive(e)) {
                n++;
                min = Math.min(min, fleet.load(e));
                max = Math.max(max, fleet.load(e));
                sum += fleet.load(e);
            }
        }
        if (n == 0) {
            return new Spread(0, 0, 0, 0, 0);
        }
        double mean = sum / n;
        double squares = 0;
        for (int e = 0; e < fleet.size(); e++) {
            if (fleet.alive(e)) {
                squares += (fleet.load(e) - mean) * (fleet.load(e) - mean);
            }
        }
        return new Spread(n, min, max, mean, Math.sqrt(squares / n));
    }
}
