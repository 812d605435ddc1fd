package dev.kvrouter.cli.bench;

import dev.kvrouter.stack.StackAddresses;
import java.io.PrintStream;
import java.time.Duration;

/** Entry points of the benchmarks, for the CLI. */
public final class Benchmarks {

    private Benchmarks() {}

    public static void pick(String redisUrl, int iterations, Duration maxPerCase, int threads, PrintStream out) throws Exception {
        PickBench.run(redisUrl, iterations, maxPerCase, threads, out);
    }

    public static void ingest(StackAddresses stack, int entries, int engines, Duration freshness, double freshnessRate,
                              java.util.Map<String, String> jobOptions, PrintStream out) throws Exception {
        IngestBench.run(stack, entries, engines, freshness, freshnessRate, jobOptions, out);
    }
}
