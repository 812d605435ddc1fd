package dev.kvrouter.cli.bench;

import dev.kvrouter.sim.metrics.Quantiles;

/** Latency samples in nanoseconds, summarised in microseconds (nearest rank, as {@link Quantiles}). */
final class Percentiles {

    private final Quantiles samples = new Quantiles();

    void add(long nanos) {
        samples.add(nanos);
    }

    int count() {
        return samples.count();
    }

    /** The q-quantile (0..1), nearest rank, in microseconds; NaN when empty. */
    double micros(double q) {
        return samples.quantile(q) / 1_000.0;
    }
}
