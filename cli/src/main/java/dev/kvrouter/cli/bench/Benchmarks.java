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

    public static void pick(StackAddresses stack, int iterations, Duration maxPerCase, int threads, PrintStream out) throws Exception {
        PickBench.run(stack.redisUrl(), RedisSecurity.fromConfig(stack.client().redis()), defaultViewMeta(stack), iterations,
                maxPerCase, threads, out);
    }

    /** The meta a kv-router job with its default settings writes beside the view. */
    private static java.util.Map<String, String> defaultViewMeta(StackAddresses stack) {
        return KvRouterJob.viewMeta(KvRouterJobConfig.from(java.util.Map.of("kafka.bootstrap", stack.kafkaBootstrap(),
                "schema-registry.url", stack.schemaRegistryUrl(), "redis.url", stack.redisUrl())));
    }

    public static void ingest(StackAddresses stack, int entries, int warmUpEntries, int engines, Duration freshness, double freshnessRate,
                              java.util.Map<String, String> jobOptions, PrintStream out) throws Exception {
        IngestBench.run(stack, entries, warmUpEntries, engines, freshness, freshnessRate, jobOptions, out);
    }
}
