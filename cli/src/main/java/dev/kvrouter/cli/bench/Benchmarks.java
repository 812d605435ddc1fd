package dev.kvrouter.cli.bench;

import dev.kvrouter.contract.RedisSecurity;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.jobs.view.KvRouterJob;
import dev.kvrouter.stack.StackAddresses;
import java.io.PrintStream;
import java.time.Duration;

/** Entry points of the benchmarks, for the CLI. */
public final class Benchmarks {

    private Benchmarks() {}

    public static void pick(StackAddresses stack, int iterations, Duration maxPerCase, java.util.List<Integer> threads, PrintStream out)
            throws Exception {
        PickBench.run(stack.redisUrl(), RedisSecurity.fromConfig(stack.client().redis()), defaultViewMeta(), iterations,
                maxPerCase, threads, out);
    }

    /** nginx routing by the view against nginx proxying without it, on a private Redis and engines of its own: no stack needed. */
    public static void gateway(java.util.List<Integer> blockSizes, int requests, int concurrency, int rounds, PrintStream out) throws Exception {
        GatewayBench.run(defaultViewMeta(), blockSizes, requests, concurrency, rounds, out);
    }

    /**
     * The meta a kv-router job with its default settings writes beside the view (the addresses the
     * configuration requires shape none of it: loopback placeholders).
     */
    private static java.util.Map<String, String> defaultViewMeta() {
        return KvRouterJob.viewMeta(KvRouterJobConfig.from(java.util.Map.of("kafka.bootstrap", "127.0.0.1:9092",
                "schema-registry.url", "http://127.0.0.1:8081", "redis.url", "redis://127.0.0.1:6379")));
    }

    public static void ingest(StackAddresses stack, int entries, int warmUpEntries, int engines, Duration freshness, double freshnessRate,
                              java.util.Map<String, String> jobOptions, PrintStream out) throws Exception {
        IngestBench.run(stack, entries, warmUpEntries, engines, freshness, freshnessRate, jobOptions, out);
    }
}
