package dev.kvrouter.sim.metrics;

import java.util.Arrays;

/** A growable list of doubles with nearest-rank quantiles. */
public final class Quantiles {

    private double[] values = new double[256];
    private int n;

    public void add(double v) {
        if (n == values.length) {
            values = Arrays.copyOf(values, n * 2);
        }
        values[n++] = v;
    }

    public int count() {
        return n;
    }

    /** The q-quantile (0..1) by nearest rank; NaN when empty. */
    public double quantile(double q) {
        if (n == 0) {
            return Double.NaN;
        }
        double[] sorted = Arrays.copyOf(values, n);
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(q * n) - 1;
        return sorted[Math.max(0, Math.min(n - 1, rank))];
    }
}
