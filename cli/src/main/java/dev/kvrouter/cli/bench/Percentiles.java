package dev.kvrouter.cli.bench;

import java.util.Arrays;

/** Latency samples in nanoseconds, summarised. */
final class Percentiles {

    private long[] samples = new long[1024];
    private int n;

    void add(long nanos) {
        if (n == samples.length) {
            samples = Arrays.copyOf(samples, n * 2);
        }
        samples[n++] = nanos;
    }

    int count() {
        return n;
    }

    /** The q-quantile (0..1), nearest rank, in microseconds. */
    double micros(double q) {
        if (n == 0) {
            return Double.NaN;
        }
        long[] sorted = Arrays.copyOf(samples, n);
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(q * n) - 1;
        return sorted[Math.max(0, Math.min(n - 1, rank))] / 1_000.0;
    }
}
