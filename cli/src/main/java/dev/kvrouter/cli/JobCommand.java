package dev.kvrouter.cli;

import dev.kvrouter.jobs.view.RoutingViewConfig;
import dev.kvrouter.jobs.view.RoutingViewJob;
import dev.kvrouter.stack.StackAddresses;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code kvr job run}: the kv-router job (routing view and ratios) in a local MiniCluster, against the stack or any given addresses. */
@Command(name = "job", mixinStandardHelpOptions = true, description = "Run kv-router's Flink jobs locally.",
        subcommands = {JobCommand.Run.class})
public final class JobCommand {

    @Command(name = "run", mixinStandardHelpOptions = true,
            description = "Run the kv-router job (routing view and per-class ratios) in a local Flink MiniCluster. Kafka, the registry and Redis default to "
                    + "the running './kvr stack' (or $KAFKA_BOOTSTRAP, $SCHEMA_REGISTRY_URL, $REDIS_URL). Stops on Ctrl-C "
                    + "or after --duration. Job options go as -D name=value; they are listed below.")
    static final class Run implements Callable<Integer> {

        @Option(names = "-D", paramLabel = "NAME=VALUE", description = "A job option; see the list below.")
        Map<String, String> options = new LinkedHashMap<>();

        @Option(names = "--duration", paramLabel = "DURATION", description = "Stop after this long, e.g. 90s or 10m (default: run until Ctrl-C).")
        String duration;

        @Override
        public Integer call() throws Exception {
            Map<String, String> settings = new LinkedHashMap<>();
            StackAddresses.fromEnv(System.getenv()).ifPresent(a -> {
                settings.put("kafka.bootstrap", a.kafkaBootstrap());
                settings.put("schema-registry.url", a.schemaRegistryUrl());
                settings.put("redis.url", a.redisUrl());
            });
            // Checkpoints of a local run go next to the stack's state, not into the JobManager's memory.
            String stateDir = System.getenv().getOrDefault("KVR_STATE_DIR", ".kvr/stack");
            settings.put("job.checkpoint-dir", java.nio.file.Path.of(stateDir).toAbsolutePath().resolveSibling("checkpoints").toUri().toString());
            settings.putAll(options);
            RoutingViewConfig config = RoutingViewConfig.from(settings);
            StreamExecutionEnvironment env = RoutingViewJob.environment(config);
            RoutingViewJob.wire(env, config);
            JobClient job = env.executeAsync("kv-router routing view");
            Thread stop = new Thread(() -> job.cancel().join(), "kvr-job-cancel");
            Runtime.getRuntime().addShutdownHook(stop);
            System.out.printf("kv-router job %s running: %s -> Redis %s (keys %s*)%n", job.getJobID(),
                    config.kvEventsTopic() + ", " + config.engineLoadTopic(), config.redisUrl(), config.viewKeyPrefix());
            if (duration == null) {
                System.out.println("Ctrl-C stops it.");
                job.getJobExecutionResult().get();
                return 0;
            }
            Duration limit = Duration.parse("PT" + duration.toUpperCase());
            try {
                job.getJobExecutionResult().get(limit.toMillis(), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException done) {
                System.out.println("ran for " + duration + "; stopping");
            }
            Runtime.getRuntime().removeShutdownHook(stop);
            job.cancel().get(60, TimeUnit.SECONDS);
            return 0;
        }
    }
}
