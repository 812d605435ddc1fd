package dev.kvrouter.cli;

import dev.kvrouter.common.Durations;
import dev.kvrouter.common.TopicNames;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.jobs.config.KvRouterJobOptions;
import dev.kvrouter.jobs.view.KvRouterJob;
import dev.kvrouter.stack.StackAddresses;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kvr job run}: the kv-router job (routing view and ratios) in a local MiniCluster, against the
 * stack or any given addresses; {@code kvr job stop}: stops one, with a savepoint to start it again
 * from ({@code run --from-savepoint}). A running job is announced by a file in the jobs directory
 * beside the stack's state; {@code stop} asks it to stop through another file there, and the run
 * takes the savepoint with its own client (a local MiniCluster has no address of its own).
 */
@Command(name = "job", mixinStandardHelpOptions = true, description = "Run kv-router's Flink jobs locally.",
        subcommands = {JobCommand.Run.class, JobCommand.Stop.class})
public final class JobCommand {

    /** Where running jobs are announced: {@code <id>.running} (the run's pid), {@code <id>.stop}, {@code <id>.stopped}. */
    static Path jobsDir() {
        return Path.of(System.getenv().getOrDefault("KVR_STATE_DIR", ".kvr/stack")).toAbsolutePath().resolveSibling("jobs");
    }

    /** {@code 90s}, {@code 10min}: the durations the job commands take ({@link Durations}). */
    static Duration duration(String text) {
        return Durations.parse(text);
    }

    static String uri(String dir) {
        return Path.of(dir).toAbsolutePath().normalize().toUri().toString();
    }

    @Command(name = "run", mixinStandardHelpOptions = true,
            description = "Run the kv-router job (routing view and per-class ratios) in a local Flink MiniCluster. Kafka, the registry and Redis default to "
                    + "the running './kvr stack' (or $KAFKA_BOOTSTRAP, $SCHEMA_REGISTRY_URL, $REDIS_URL). Stops on Ctrl-C "
                    + "or after --duration. Job options go as -D name=value; they are listed below.")
    static final class Run implements Callable<Integer> {

        @Option(names = "-D", paramLabel = "NAME=VALUE", description = "A job option; see the list below.")
        Map<String, String> options = new LinkedHashMap<>();

        @Option(names = "--duration", paramLabel = "DURATION", description = "Stop after this long, e.g. 90s or 10m (default: run until Ctrl-C).")
        String duration;

        @Option(names = "--from-savepoint", paramLabel = "DIR", description = "Start from this savepoint ('./kvr job stop "
                + "--savepoint' prints it) or retained checkpoint (a chk-N directory under job.checkpoint-dir).")
        String fromSavepoint;

        @Option(names = "--metrics-port", paramLabel = "PORT",
                description = "Serve the job's metrics for Prometheus at http://<host>:PORT/metrics (Flink's Prometheus reporter; "
                        + "it listens on every interface). Default: no metrics endpoint.")
        Integer metricsPort;

        @Override
        public Integer call() throws Exception {
            Map<String, String> settings = new LinkedHashMap<>();
            StackAddresses.fromEnv(System.getenv()).ifPresent(a -> {
                settings.put("kafka.bootstrap", a.kafkaBootstrap());
                settings.put("schema-registry.url", a.schemaRegistryUrl());
                settings.put("redis.url", a.redisUrl());
                if (!a.clientConfig().isEmpty()) {
                    settings.put(KvRouterJobOptions.CLIENT_CONFIG.key(), a.clientConfig());
                }
            });
            // Checkpoints of a local run go next to the stack's state, not into the JobManager's memory.
            String stateDir = System.getenv().getOrDefault("KVR_STATE_DIR", ".kvr/stack");
            settings.put("job.checkpoint-dir", java.nio.file.Path.of(stateDir).toAbsolutePath().resolveSibling("checkpoints").toUri().toString());
            settings.putAll(options);
            KvRouterJobConfig config = KvRouterJobConfig.from(settings);
            config.warnings().forEach(w -> System.err.println("kvr job run: warning: " + w));
            if (fromSavepoint != null && !Files.isDirectory(Path.of(fromSavepoint))) {
                throw new CommandLine.ParameterException(new CommandLine(this), "--from-savepoint " + fromSavepoint
                        + " is not a directory: give the path './kvr job stop --savepoint' printed, or a chk-N directory");
            }
            if (metricsPort != null && (metricsPort < 1 || metricsPort > 65535)) {
                throw new CommandLine.ParameterException(new CommandLine(this), "--metrics-port " + metricsPort + " is not a port: give 1-65535");
            }
            StreamExecutionEnvironment env = KvRouterJob.environment(config, fromSavepoint == null ? null : uri(fromSavepoint),
                    metricsPort == null ? new org.apache.flink.configuration.Configuration()
                            : KvRouterJob.prometheusReporter(Integer.toString(metricsPort)));
            KvRouterJob.wire(env, config);
            JobClient job = env.executeAsync(KvRouterJob.JOB_NAME);
            Path dir = Files.createDirectories(jobsDir());
            Path running = dir.resolve(job.getJobID() + ".running");
            Files.writeString(running, Long.toString(ProcessHandle.current().pid()));
            Thread stop = new Thread(() -> {
                job.cancel().join();
                deleteQuietly(running);
            }, "kvr-job-cancel");
            Runtime.getRuntime().addShutdownHook(stop);
            System.out.printf("kv-router job %s running%s: %s -> Redis %s (keys %s*)%n", job.getJobID(),
                    fromSavepoint == null ? "" : " from " + fromSavepoint,
                    config.kafka().topic(TopicNames.KV_EVENTS) + ", " + config.kafka().topic(TopicNames.ENGINE_LOAD), config.view().redisUrl(), config.view().keyPrefix());
            if (metricsPort != null) {
                System.out.printf("metrics for Prometheus: http://127.0.0.1:%d/metrics%n", metricsPort);
            }
            System.out.println(duration == null ? "Ctrl-C or './kvr job stop' stops it." : "'./kvr job stop' stops it sooner.");
            long deadline = duration == null ? Long.MAX_VALUE
                    : System.nanoTime() + duration(duration).toNanos();
            Path stopRequest = dir.resolve(job.getJobID() + ".stop");
            boolean stopped = false;
            try {
                // Until the job ends by itself, the duration is up, or './kvr job stop' asks (checked every 200 ms).
                while (!stopped && !job.getJobExecutionResult().isDone()) {
                    if (Files.exists(stopRequest)) {
                        String savepointDir = Files.readString(stopRequest).trim();
                        Files.delete(stopRequest);
                        String outcome;
                        if (savepointDir.isEmpty()) {
                            job.cancel().get(60, TimeUnit.SECONDS);
                            outcome = "";
                        } else {
                            outcome = job.stopWithSavepoint(false, uri(savepointDir), SavepointFormatType.CANONICAL)
                                    .get(10, TimeUnit.MINUTES);
                            System.out.println("savepoint: " + outcome);
                        }
                        Files.writeString(dir.resolve(job.getJobID() + ".stopped"), outcome);
                        stopped = true;
                    } else if (System.nanoTime() > deadline) {
                        System.out.println("ran for " + duration + "; stopping");
                        job.cancel().get(60, TimeUnit.SECONDS);
                        stopped = true;
                    } else {
                        Thread.sleep(200);
                    }
                }
                if (!stopped) {
                    job.getJobExecutionResult().get(); // it ended by itself: a failed job's error, not silence
                }
            } finally {
                Runtime.getRuntime().removeShutdownHook(stop);
                deleteQuietly(running);
            }
            return 0;
        }
    }

    @Command(name = "stop", mixinStandardHelpOptions = true,
            description = "Stop a job that './kvr job run' runs from this checkout; with --savepoint, take a savepoint first and print "
                    + "its path, for './kvr job run --from-savepoint'. On a Flink cluster, use 'flink stop --savepointPath DIR JOB_ID'.")
    static final class Stop implements Callable<Integer> {

        @Option(names = "--savepoint", paramLabel = "DIR", description = "Write a savepoint under DIR (a new directory per savepoint).")
        String savepointDir;

        @Option(names = "--job", paramLabel = "JOB_ID", description = "Which job (default: the only one running).")
        String jobId;

        @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "10m",
                description = "Give up waiting for the job to stop after this long (default: ${DEFAULT-VALUE}).")
        String timeout;

        @Override
        public Integer call() throws Exception {
            Path dir = jobsDir();
            List<String> running = new ArrayList<>();
            if (Files.isDirectory(dir)) {
                try (var files = Files.list(dir)) {
                    files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".running"))
                            .map(n -> n.substring(0, n.length() - ".running".length()))
                            .filter(id -> alive(dir.resolve(id + ".running"))).sorted().forEach(running::add);
                }
            }
            String id = jobId;
            if (id == null) {
                if (running.size() != 1) {
                    System.err.println(running.isEmpty() ? "no job started by './kvr job run' is running (jobs directory: " + dir + ")"
                            : "several jobs are running; name one with --job: " + String.join(", ", running));
                    return 2;
                }
                id = running.get(0);
            } else if (!running.contains(id)) {
                System.err.println("job " + id + " is not running; running: " + (running.isEmpty() ? "none" : String.join(", ", running)));
                return 2;
            }
            Path stopped = dir.resolve(id + ".stopped");
            Files.deleteIfExists(stopped);
            Path request = dir.resolve(id + ".stop.tmp");
            Files.writeString(request, savepointDir == null ? "" : Path.of(savepointDir).toAbsolutePath().toString());
            Files.move(request, dir.resolve(id + ".stop"), StandardCopyOption.ATOMIC_MOVE);
            System.out.println("asked job " + id + " to stop" + (savepointDir == null ? "" : " with a savepoint under " + savepointDir));
            long deadline = System.nanoTime() + duration(timeout).toNanos();
            Path announced = dir.resolve(id + ".running");
            // Until the run writes what came of it, or ends without a word (every 200 ms, bounded by --timeout).
            while (!Files.exists(stopped) && alive(announced)) {
                if (System.nanoTime() > deadline) {
                    System.err.println("job " + id + " did not stop within " + timeout);
                    return 1;
                }
                Thread.sleep(200);
            }
            if (!Files.exists(stopped)) {
                System.err.println("job " + id + " ended before it could take the savepoint; see its output");
                return 1;
            }
            String savepoint = Files.readString(stopped).trim();
            Files.deleteIfExists(stopped);
            System.out.println(savepoint.isEmpty() ? "stopped" : "stopped with savepoint " + savepoint
                    + "\nstart again from it: ./kvr job run --from-savepoint " + Path.of(java.net.URI.create(savepoint)));
            return 0;
        }

        /** Whether the run that announced itself in this file is still alive (a killed run leaves its file behind). */
        private static boolean alive(Path announcement) {
            try {
                long pid = Long.parseLong(Files.readString(announcement).trim());
                return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
            } catch (IOException | NumberFormatException e) {
                return false;
            }
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException ignored) {
            // the announcement of a run that ended: 'stop' also checks the pid
        }
    }
}
