package dev.kvrouter.common;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** Load figures across a fleet: mean, Gini coefficient, hot engines. */
public final class LoadStats {

    private LoadStats() {}

    /**
     * Gini coefficient of non-negative loads: 0 when all are equal, (n-1)/n when one engine has it
     * all. Uses the sorted form G = 2 Σ i·x_(i) / (n Σ x) − (n + 1) / n, i from 1.
     */
    public static double gini(double[] loads) {
        int n = loads.length;
        if (n == 0) {
            return 0;
        }
        double[] x = loads.clone();
        Arrays.sort(x);
        double sum = 0;
        double weighted = 0;
        for (int i = 0; i < n; i++) {
            if (x[i] < 0) {
                throw new IllegalArgumentException("a load cannot be negative: " + x[i]);
            }
            sum += x[i];
            weighted += (i + 1) * x[i];
        }
        return sum == 0 ? 0 : 2 * weighted / (n * sum) - (double) (n + 1) / n;
    }

    public static double mean(double[] loads) {
        return loads.length == 0 ? 0 : Arrays.stream(loads).sum() / loads.length;
    }

    /**
     * The load above which an engine is hot: {@code factor} times the fleet mean, and never under
     * {@code factor} requests — in a fleet averaging less than one request per engine, an engine
     * with one or two is not concentrating anything (kvr_pick's rule too).
     */
    public static double hotAbove(double mean, double factor) {
        return factor * Math.max(mean, 1);
    }

    /** Engines whose load is above {@link #hotAbove}, sorted by name. */
    public static List<String> hot(Map<String, Double> loads, double factor) {
        double above = hotAbove(loads.values().stream().mapToDouble(Double::doubleValue).average().orElse(0), factor);
        List<String> hot = new ArrayList<>();
        loads.forEach((engine, load) -> {
            if (load > above) {
                hot.add(engine);
            }
        });
        hot.sort(null);
        return hot;
    }
}
