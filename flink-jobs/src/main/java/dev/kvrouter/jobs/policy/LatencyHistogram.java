package dev.kvrouter.jobs.policy;

/**
 * Bounded-memory latency percentiles: log-spaced buckets (about 2 % wide) from 0.1 ms to about
 * 10 minutes, so a window's p50/p99 costs a fixed array whatever the traffic. A POJO-friendly
 * array of counts, mergeable across windows and subtasks.
 */
public final class LatencyHistogram {

    private static final double MIN_MS = 0.1;
    private static final double GROWTH = 1.02;
    static final int BUCKETS = 800;

    public long[] counts = new long[BUCKETS];
    public long total;

    public void add(double ms) {
        counts[bucket(ms)]++;
        total++;
    }

    public void merge(LatencyHistogram other) {
        for (int i = 0; i < BUCKETS; i++) {
            counts[i] += other.counts[i];
        }
        total += other.total;
    }

    /** The q-quantile (0..1): the upper edge of the bucket holding that rank; NaN when empty. */
    public double quantileMs(double q) {
        if (total == 0) {
            return Double.NaN;
        }
        long rank = Math.max(1, (long) Math.ceil(q * total));
        long seen = 0;
        for (int i = 0; i < BUCKETS; i++) {
            seen += counts[i];
            if (seen >= rank) {
                return upperEdge(i);
            }
        }
        return upperEdge(BUCKETS - 1);
    }

    static int bucket(double ms) {
        if (!(ms > MIN_MS)) {
            return 0;
        }
        int b = (int) Math.ceil(Math.log(ms / MIN_MS) / Math.log(GROWTH));
        return Math.min(BUCKETS - 1, b);
    }

    static double upperEdge(int bucket) {
        return MIN_MS * Math.pow(GROWTH, bucket);
    }
}
