package dev.kvrouter.cli.demo;

import dev.kvrouter.common.Durations;
import dev.kvrouter.common.TopicNames;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.jobs.config.KvRouterJobOptions;
import dev.kvrouter.jobs.view.KvRouterJob;
import dev.kvrouter.sim.FleetOptions;
import dev.kvrouter.sim.SimCommand;
import dev.kvrouter.sim.WorkloadOptions;
import dev.kvrouter.stack.LocalPrometheus;
import dev.kvrouter.stack.LocalStack;
import dev.kvrouter.stack.Ports;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.topics.KafkaClients;
import dev.kvrouter.topics.TopicApplier;
import dev.kvrouter.topics.TopicCatalog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code kvr demo}: the whole product on one machine, for a few minutes. Brings up the local stack
 * (or uses the running one), applies the topics under a prefix of its own, runs the routing-view
 * job in a MiniCluster, and runs the simulated fleet routed by the view (the Java client's pick on
 * Redis) beside the other policies on copies of the same fleet, with an engine killed and another
 * slowed on the way. The four ratios per class print live from the job's ratios topic; at the end
 * the simulator's report (Markdown and charts) compares the policies. Everything it started, it
 * stops.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = {"Run the whole pipeline for a few minutes: stack, topics, the Flink job, a simulated fleet routed by the "
                + "view beside other policies, a live table of the ratios per class, and a report at the end. Stops by itself."})
public final class DemoCommand implements Callable<Integer> {

    @Option(names = "--duration", defaultValue = "150s",
            description = "How long requests arrive, e.g. 90s or 3m; the run then drains and reports (default: ${DEFAULT-VALUE}).")
    String duration;

    @Option(names = "--engines", defaultValue = "6", description = "Simulated engines per policy (default: ${DEFAULT-VALUE}).")
    int engines;

    @Option(names = "--capacity", defaultValue = "32768",
            description = "KV cache per engine, in blocks of 16 tokens, or K times the workload's median prompt (e.g. 4x: caches only a "
                    + "few prompts deep), as for 'kvr sim' (default: ${DEFAULT-VALUE}).")
    String capacity;

    @Option(names = "--rate-scale",
            description = "Multiplies the workload's arrival rates, which suit 8 engines (default: engines / 8, the same load per engine "
                    + "whatever the fleet's size).")
    Double rateScale;

    @Option(names = "-D", paramLabel = "NAME=VALUE",
            description = "A job option, as for 'kvr job run' (e.g. -D cost.uncached-prefill-weight=2); over the demo's own settings.")
    Map<String, String> jobOptions = new LinkedHashMap<>();

    @Mixin
    WorkloadOptions stream = new WorkloadOptions();

    @Option(names = "--balancers", defaultValue = "1",
            description = "Independent balancers placing the view's requests, sharing only Redis (default: ${DEFAULT-VALUE}).")
    int balancers;

    @Option(names = "--view-hold", defaultValue = FleetOptions.DEFAULT_VIEW_HOLD,
            description = "How long the view's balancers hold a request while every engine is full, as for 'kvr sim' "
                    + "(default: ${DEFAULT-VALUE}; 0ms: never).")
    String viewHold;

    @Option(names = "--report-slots", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "The simulated engines' load reports carry their slots, as for 'kvr sim' (default: on).")
    boolean reportSlots;

    @Option(names = "--failures", description = "Scheduled failures as for 'kvr sim' (default: engine 2 dies at 40 %% of the run, "
            + "engine 1 runs at a quarter of its speed from 60 %% for 20 %% of it).")
    String failures;

    @Option(names = "--out", paramLabel = "DIR", description = "Folder of the report (default: .kvr/demo/<run>).")
    Path out;

    @Option(names = "--keep-stack", description = "Leave a stack the demo started running at the end.")
    boolean keepStack;

    @Option(names = "--prometheus", description = "Also run Prometheus (Debian's package, installed with apt-get when missing) "
            + "scraping the job's metrics every second with the recommended alert rules, and print its URL; it stops with the demo.")
    boolean prometheus;

    /** Called with Prometheus' URL once the run is over, before Prometheus and the job stop (tests query it here). */
    java.util.function.Consumer<String> whilePrometheusRuns = url -> {};

    @Option(names = "--audit-match", hidden = true,
            description = "Passed to the simulator: compare every pick's searched runs with a read of every block (a measurement).")
    boolean auditMatch;

    @Option(names = "--truth-log", hidden = true,
            description = "Passed to the simulator: each placement beside what the engines truly held, in truth.csv of the run (a measurement).")
    boolean truthLog;

    @Option(names = "--run-id", hidden = true, description = "Name of the run (topic and key prefixes); default demo-<time>.")
    String runId;

    private static final Duration RATIOS_WINDOW = Duration.ofSeconds(10);

    @Override
    public Integer call() throws Exception {
        Path stateDir = Path.of(System.getenv().getOrDefault("KVR_STATE_DIR", ".kvr/stack"));
        LocalStack stack = new LocalStack(LocalStack.Options.defaults(stateDir).withOut(System.err));
        // The stack of the state folder: reused when every service answers, else started (and stopped at the end).
        boolean wasRunning = stack.status().stream().allMatch(LocalStack.ServiceStatus::answering);
        StackAddresses addresses = stack.up();
        try {
            return run(addresses, stateDir.resolveSibling("demo"));
        } finally {
            if (!wasRunning && !keepStack) {
                System.err.println("kvr demo: stopping the stack it started");
                stack.down();
            }
        }
    }

    /** The demo on a given stack; the report goes to {@code --out}, else a new folder under {@code demoDir}. Returns the exit code. */
    int run(StackAddresses stack, Path demoDir) throws Exception {
        double seconds = Durations.seconds(duration);
        if (seconds < 20 || seconds > 3600) {
            throw new IllegalArgumentException("--duration must be between 20s and 1h, was " + duration);
        }
        if (engines < 3 || engines > 64) {
            throw new IllegalArgumentException("--engines must be between 3 and 64, was " + engines);
        }
        String run = runId != null ? runId : "demo-" + Long.toString(System.currentTimeMillis(), 36);
        Path runDir = out != null ? out : demoDir.resolve(run);
        String topics = run + ".";
        String viewPrefix = run + ":";
        try (Admin admin = Admin.create(KafkaClients.config(stack.client(), Map.of("bootstrap.servers", stack.kafkaBootstrap())))) {
            TopicApplier applier = new TopicApplier(admin, Duration.ofSeconds(30));
            List<String> problems = applier.apply(applier.plan(TopicCatalog.bundled().withPrefix(topics)));
            if (!problems.isEmpty()) {
                throw new IllegalStateException("the demo's topics could not be created: " + problems);
            }
        }
        KvRouterJobConfig config = KvRouterJobConfig.from(jobSettingsWithOptions(stack, topics, viewPrefix, run, runDir));
        config.warnings().forEach(w -> System.err.println("kvr demo: warning: " + w));
        int metricsPort = prometheus ? Ports.free() : 0;
        StreamExecutionEnvironment env = KvRouterJob.environment(config, null, prometheus
                ? KvRouterJob.prometheusReporter(Integer.toString(metricsPort)) : new org.apache.flink.configuration.Configuration());
        KvRouterJob.wire(env, config);
        JobClient job = env.executeAsync("kv-router demo " + run);
        System.err.printf("kvr demo: the routing-view job is running (topics %s*, Redis keys %s*)%n", topics, viewPrefix);
        LocalPrometheus scraper = null;
        try (LiveRatios live = new LiveRatios(stack, config.kafka().topic(TopicNames.CLASS_RATIOS), config.kafka().topic(TopicNames.ALERTS), RATIOS_WINDOW, System.out)) {
            if (prometheus) {
                scraper = LocalPrometheus.start(runDir.resolve("prometheus"), List.of("127.0.0.1:" + metricsPort), alertRules(runDir), System.err);
                System.err.printf("kvr demo: Prometheus at %s scrapes the job's metrics (%s/metrics); the dashboard's queries are in "
                        + "operations/grafana/kv-router.json%n", scraper.url(), "http://127.0.0.1:" + metricsPort);
            }
            live.start();
            int exit = new CommandLine(new SimCommand()).execute(simArgs(stack, topics, viewPrefix, runDir, seconds));
            // The last requests' window closes one window after they finish: show it before stopping.
            live.awaitWindowAfter(System.currentTimeMillis(), RATIOS_WINDOW.plusSeconds(5));
            if (scraper != null) {
                whilePrometheusRuns.accept(scraper.url());
            }
            System.out.println();
            System.out.println("kvr demo: done. The run's topics (" + topics + "*) stay in Kafka for a look; the view expires from "
                    + "Redis within " + config.view().ttl().toSeconds() + " s of the job stopping.");
            return exit;
        } finally {
            if (scraper != null) {
                scraper.close();
            }
            job.cancel().get(60, TimeUnit.SECONDS);
        }
    }

    /** The recommended alert rules (operations/prometheus/kv-router-alerts.yml, packed in the CLI), written into the run's folder. */
    private static Path alertRules(Path runDir) throws java.io.IOException {
        Path rules = runDir.resolve("kv-router-alerts.yml");
        Files.createDirectories(runDir);
        try (var in = DemoCommand.class.getResourceAsStream("/operations/prometheus/kv-router-alerts.yml")) {
            if (in == null) {
                throw new IllegalStateException("the CLI was built without operations/prometheus/kv-router-alerts.yml");
            }
            Files.copy(in, rules, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        return rules;
    }

    /** The job's options for a short run: short ratio windows and health timeouts, so minutes show what hours would. */
    static Map<String, String> jobSettings(StackAddresses stack, String topics, String viewPrefix, String run, Path runDir) {
        Map<String, String> s = new LinkedHashMap<>();
        s.put(KvRouterJobOptions.KAFKA_BOOTSTRAP.key(), stack.kafkaBootstrap());
        s.put(KvRouterJobOptions.SCHEMA_REGISTRY_URL.key(), stack.schemaRegistryUrl());
        s.put(KvRouterJobOptions.REDIS_URL.key(), stack.redisUrl());
        if (!stack.clientConfig().isEmpty()) {
            s.put(KvRouterJobOptions.CLIENT_CONFIG.key(), stack.clientConfig());
        }
        s.put(KvRouterJobOptions.TOPIC_PREFIX.key(), topics);
        s.put(KvRouterJobOptions.GROUP_ID.key(), "kvr-" + run);
        s.put(KvRouterJobOptions.STARTING_OFFSETS.key(), "earliest");
        s.put(KvRouterJobOptions.VIEW_KEY_PREFIX.key(), viewPrefix);
        s.put(KvRouterJobOptions.RATIOS_WINDOW.key(), RATIOS_WINDOW.toSeconds() + " s");
        s.put(KvRouterJobOptions.RATIOS_SLIDING_WINDOW.key(), "60 s");
        s.put(KvRouterJobOptions.RATIOS_SLIDE.key(), RATIOS_WINDOW.toSeconds() + " s");
        s.put(KvRouterJobOptions.RATIOS_JOIN_BOUND.key(), "60 s");
        s.put(KvRouterJobOptions.RATIOS_USD_PER_MILLION.key(), "0.5");
        s.put(KvRouterJobOptions.AFFINITY_MIN_REQUESTS.key(), "10");
        s.put(KvRouterJobOptions.SUSPECT_AFTER.key(), "3 s");
        s.put(KvRouterJobOptions.DEAD_AFTER.key(), "8 s");
        s.put(KvRouterJobOptions.CHECKPOINT_INTERVAL.key(), "30 s");
        s.put(KvRouterJobOptions.CHECKPOINT_DIR.key(), runDir.resolve("checkpoints").toAbsolutePath().toUri().toString());
        return s;
    }

    /** The demo's job settings with the {@code -D} options over them. */
    Map<String, String> jobSettingsWithOptions(StackAddresses stack, String topics, String viewPrefix, String run, Path runDir) {
        Map<String, String> s = jobSettings(stack, topics, viewPrefix, run, runDir);
        s.putAll(jobOptions);
        return s;
    }

    String[] simArgs(StackAddresses stack, String topics, String viewPrefix, Path runDir, double seconds) {
        String failureSpec = failures != null ? failures : String.format(Locale.ROOT, "kill:2@%.0f,slow:1@%.0f/%.0fx0.25",
                seconds * 0.4, seconds * 0.6, seconds * 0.2);
        List<String> args = new ArrayList<>(List.of(
                "--balancers", Integer.toString(balancers),
                "--view-hold", viewHold,
                "--duration", String.format(Locale.ROOT, "%.0fs", seconds),
                "--engines", Integer.toString(engines),
                "--capacity", capacity,
                "--rate-scale", String.format(Locale.ROOT, "%.3f", rateScale != null ? rateScale : engines / 8.0), // the rates suit 8 engines
                "--policies", "view,round-robin,least-loaded,consistent-hash,sglang,aibrix,oracle",
                "--publish", "view",
                "--speed", "1",
                "--bootstrap", stack.kafkaBootstrap(),
                "--schema-registry", stack.schemaRegistryUrl(),
                "--topics-prefix", topics,
                "--redis-url", stack.redisUrl(),
                "--view-key-prefix", viewPrefix,
                "--out", runDir.toString()));
        if (!stack.clientConfig().isEmpty()) {
            args.addAll(List.of("--client-config", stack.clientConfig()));
        }
        args.addAll(stream.asArgs());
        if (auditMatch) {
            args.add("--audit-match");
        }
        if (truthLog) {
            args.addAll(List.of("--truth-log", runDir.resolve("truth.csv").toString()));
        }
        args.add(reportSlots ? "--report-slots" : "--no-report-slots");
        if (!failureSpec.isBlank()) {
            args.addAll(List.of("--failures", failureSpec));
        }
        return args.toArray(String[]::new);
    }
}
