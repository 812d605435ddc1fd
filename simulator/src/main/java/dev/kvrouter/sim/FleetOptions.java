package dev.kvrouter.sim;

import dev.kvrouter.common.cli.AvroTopicsOptions;
import picocli.CommandLine.Mixin;
import dev.kvrouter.common.cli.RedisOption;
import dev.kvrouter.common.config.ClientConfig;
import dev.kvrouter.common.Durations;
import dev.kvrouter.balancer.KvRouterClient;
import dev.kvrouter.contract.RedisSecurity;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.sim.engine.EngineConfig;
import dev.kvrouter.sim.engine.Failure;
import dev.kvrouter.sim.metrics.ClassStats.Summary;
import dev.kvrouter.sim.metrics.PolicyMetrics.PolicyResult;
import dev.kvrouter.sim.policy.Policies;
import dev.kvrouter.sim.policy.ViewPolicy;
import dev.kvrouter.sim.report.ReportWriter;
import dev.kvrouter.sim.sink.EventSink;
import dev.kvrouter.sim.sink.KafkaEventSink;
import dev.kvrouter.sim.workload.Workload;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Option;

/** The options {@code sim} and {@code replay} share: the fleet, the policies, failures, pacing, Kafka, the report. */
public final class FleetOptions {

    @Option(names = "--engines", defaultValue = "8", description = "Engines per policy's fleet (default: ${DEFAULT-VALUE}).")
    int engines;

    @Option(names = "--capacity", defaultValue = "32768",
            description = "KV cache capacity per engine, in blocks of 16 tokens (default: ${DEFAULT-VALUE} = 512k tokens, an 8B model on one "
                    + "80 GB GPU), or K times the workload's median prompt, e.g. 4x: caches only a few prompts deep.")
    String capacity;

    @Option(names = "--prefill-rate", defaultValue = "10000", description = "Prefill throughput per engine, uncached tokens/s (default: ${DEFAULT-VALUE}).")
    double prefillRate;

    @Option(names = "--decode-rate", defaultValue = "30", description = "Decode speed per sequence, tokens/s (default: ${DEFAULT-VALUE}).")
    double decodeRate;

    @Option(names = "--max-running", defaultValue = "32", description = "Sequences an engine runs at once; the rest queue FIFO (default: ${DEFAULT-VALUE}).")
    int maxRunning;

    @Option(names = "--prefill-chunk", defaultValue = "" + EngineConfig.DEFAULT_PREFILL_CHUNK_TOKENS,
            description = "Tokens a prefill computes per chunk, each chunk's blocks cached and announced as it completes, as vLLM's "
                    + "chunked prefill does (max_num_batched_tokens); 0: the whole prompt at once (default: ${DEFAULT-VALUE}).")
    int prefillChunk;

    @Option(names = "--report-slots", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Engines' load reports carry their slots (max_running), as a bridge given each engine's max-running does "
                    + "(default: on); --no-report-slots: the job learns a lower bound once an engine queues.")
    boolean reportSlots;

    @Option(names = "--policies", split = ",", defaultValue = "round-robin,least-loaded,consistent-hash,sglang,aibrix,oracle",
            description = "Policies to compare, each on its own copy of the fleet: round-robin, least-loaded, consistent-hash, sglang, aibrix, oracle "
                    + "(default: all of these), and view (the routing view in Redis: needs --publish view, --speed and the job running).")
    List<String> policies;

    @Option(names = "--failures", split = ",", description = "Scheduled failures, applied to every fleet: kill:E@T, restart:E@T/DOWN, "
            + "slow:E@T/DURxFACTOR, gap:E@T/BATCHES (engine index, seconds), e.g. kill:2@120,slow:1@60/60x0.25.")
    List<String> failures = new ArrayList<>();

    @Option(names = "--hash-blocks", defaultValue = "1", description = "Leading blocks the consistent hash keys on (default: ${DEFAULT-VALUE}).")
    int hashBlocks;

    @Option(names = "--table-blocks", defaultValue = "0",
            description = "Blocks the SGLang and AIBrix routers remember of what they routed; 0 = twice the fleet's KV capacity (default).")
    int tableBlocks;

    @Option(names = "--oracle-uncached-prefill-weight", defaultValue = "3.0",
            description = "How the oracle weighs a request's uncached prefill against the true wait, as the view's "
                    + "cost.uncached-prefill-weight (default: ${DEFAULT-VALUE}).")
    double oracleUncachedPrefillWeight;

    @Option(names = "--oracle-client-min-inflight", defaultValue = "" + ViewLayout.DEFAULT_CLIENT_MIN_INFLIGHT,
            description = "A client's requests in flight from which the oracle copies its prompt to a spare engine before the "
                    + "holders fill, as the view's view.client-min-inflight (default: ${DEFAULT-VALUE}).")
    int oracleClientMinInflight;

    @Option(names = "--usd-per-million", defaultValue = "0.50", description = "Input price, $ per million prompt tokens (default: ${DEFAULT-VALUE}).")
    double usdPerMillion;

    @Option(names = "--window", description = "Width of the report's time windows, e.g. 60s (default: 1/60 of the run, at least 10 s).")
    String window;

    @Option(names = "--speed", defaultValue = "0",
            description = "Pace virtual time to wall time × this factor (for a real pipeline in the loop); 0 runs as fast as possible (default).")
    double speed;

    @Option(names = "--publish", description = "Publish this policy's fleet (KV events, load, outcomes, decisions) to Kafka; the others stay in memory.")
    String publish;

    @Mixin
    AvroTopicsOptions topics;

    @Mixin
    RedisOption redis;

    @Option(names = "--balancers", defaultValue = "1",
            description = "Independent balancers for the 'view' policy, each its own client and connection, requests dealt among "
                    + "them by request id; they share only what is in Redis (default: ${DEFAULT-VALUE}).")
    int balancers;

    /** How long a view balancer holds a request while every engine is full, unless told (BENCHMARKS.md, run 16). */
    public static final String DEFAULT_VIEW_HOLD = "30s";

    @Option(names = "--view-hold", defaultValue = DEFAULT_VIEW_HOLD,
            description = "With the 'view' policy: how long a balancer holds a request while every engine is full, asking again "
                    + "when one of its requests ends and every 25 ms, so that the request takes the first slot freed anywhere "
                    + "(KvRouterClient.Options.hold); 0ms never holds (default: ${DEFAULT-VALUE}).")
    String viewHold;

    @Option(names = "--audit-match",
            description = "With the 'view' policy: read every prompt's blocks in full beside its pick and print how often the pick's "
                    + "search over the blocks found a longer run than reading each block (holes in the view's prefix property). "
                    + "Adds Redis reads to every pick: a measurement, not a run to time the routing by.")
    boolean auditMatch;

    @Option(names = "--truth-log", paramLabel = "FILE",
            description = "Write each placement of every policy beside what the engines truly held then (CSV: the blocks the chosen "
                    + "engine and the fleet's best engine held): a view that missed a holder told from traffic that was truly cold.")
    Path truthLog;

    @Option(names = "--view-key-prefix", defaultValue = "kvr:", description = "Key prefix of the routing view, for the 'view' policy (default: ${DEFAULT-VALUE}).")
    String viewKeyPrefix;

    @Option(names = "--out", description = "Folder for report.md and the charts (default: .kvr/sim-reports/<command>-<time>).")
    Path out;

    /** The engines as configured; a capacity given as a multiple of the median prompt is resolved against {@code workload}. */
    EngineConfig engineConfig(Workload workload) {
        if (prefillChunk < 0) {
            throw new IllegalArgumentException("--prefill-chunk must be 0 (no chunks) or a number of tokens, was " + prefillChunk);
        }
        EngineConfig base = EngineConfig.defaults().withRates(prefillRate, decodeRate).withMaxRunning(maxRunning).withSlotsReported(reportSlots)
                .withPrefillChunkTokens(prefillChunk);
        return base.withCapacity(capacityBlocks(capacity, workload, base.blockTokens()));
    }

    /**
     * {@code --capacity}: blocks, or {@code <K>x}, K times the workload's median prompt in whole blocks (at least one block).
     */
    static int capacityBlocks(String capacity, Workload workload, int blockTokens) {
        String c = capacity.trim();
        try {
            if (c.endsWith("x") || c.endsWith("X")) {
                double times = Double.parseDouble(c.substring(0, c.length() - 1));
                if (times > 0 && times <= 1_000) {
                    return (int) Math.max(1, Math.round(times * workload.medianPromptBlocks(blockTokens)));
                }
            } else {
                int blocks = Integer.parseInt(c);
                if (blocks >= 1) {
                    return blocks;
                }
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("--capacity must be a number of blocks (at least 1, e.g. 32768) or a multiple of the "
                + "workload's median prompt (e.g. 4x, above 0 and at most 1000x), was '" + capacity + "'");
    }

    /** Runs the workload through every chosen policy, writes the report, prints the summary; returns the report path. */
    Path run(String command, Workload workload, long expectedRequests, double expectedDurationS, ReportWriter.Bound bound, String commandLine,
             java.io.PrintWriter out, PrintStream err) throws Exception {
        if (policies.contains("view")) {
            // The view learns from the events of the fleet it routes for, in wall time.
            if (!"view".equals(publish) || speed <= 0) {
                throw new IllegalArgumentException("the 'view' policy routes from the live pipeline: add --publish view and --speed S "
                        + "(e.g. 1), with the kv-router job running against the same topics and Redis ('./kvr job run')");
            }
        }
        if (balancers < 1 || balancers > 64) {
            throw new IllegalArgumentException("--balancers must be between 1 and 64, was " + balancers);
        }
        if (oracleClientMinInflight < 1) {
            throw new IllegalArgumentException("--oracle-client-min-inflight must be at least 1, was " + oracleClientMinInflight);
        }
        if (publish != null && !policies.contains(publish)) {
            throw new IllegalArgumentException("--publish " + publish + " is not among --policies " + policies);
        }
        double windowMs = window != null ? Durations.seconds(window) * 1000 : Math.max(10_000, Math.ceil(expectedDurationS / 60) * 1000);
        String runId = command + "-" + Long.toString(System.currentTimeMillis(), 36);
        EngineConfig engine = engineConfig(workload);
        SimRunner.Settings settings = SimRunner.Settings.defaults(engines, engine)
                .withFailures(failures.stream().map(Failure::parse).toList()).withWindowMs(windowMs)
                .withUsdPerMillion(usdPerMillion).withSpeed(speed).withRunId(runId).withTruthLog(truthLog);
        int table = tableBlocks > 0 ? tableBlocks : (int) Math.min(Integer.MAX_VALUE - 8L, 2L * engines * engine.capacityBlocks());
        Policies.Settings ps = new Policies.Settings(hashBlocks, table, oracleUncachedPrefillWeight, oracleClientMinInflight);
        List<SimRunner.FleetSpec> specs = new ArrayList<>();
        ClientConfig client = topics.clientConfig.load();
        EventSink published = null;
        try {
            for (String p : policies) {
                EventSink sink = EventSink.DISCARD;
                if (p.equals(publish)) {
                    topics.requireServices();
                    published = new KafkaEventSink(topics.kafka.value(), topics.registry.value(), KafkaEventSink.Topics.withPrefix(topics.prefix()),
                            client);
                    sink = published;
                }
                if (p.equals("view")) {
                    KvRouterClient.Options view = KvRouterClient.Options.defaults(redis.value())
                            .withKeyPrefix(viewKeyPrefix).withSecurity(RedisSecurity.fromConfig(client.redis()))
                            .holding(Durations.parse(viewHold));
                    specs.add(new SimRunner.FleetSpec(() -> ViewPolicy.connect(view, balancers, auditMatch ? err : null), sink));
                } else {
                    specs.add(new SimRunner.FleetSpec(Policies.factory(p, ps), sink));
                }
            }
            err.println("kvr " + command + ": " + workload.name() + ", " + engines + " engines × " + policies.size() + " policies"
                    + (publish == null ? "" : ", publishing " + publish + " to Kafka")
                    + (policies.contains("view") ? ", " + balancers + (balancers == 1 ? " balancer" : " balancers") + " on the view" : "") + (speed > 0 ? ", paced ×" + speed : "")
                    + ", " + engine.capacityBlocks() + " KV blocks an engine");
            SimRunner.Result result = new SimRunner(settings, err).run(workload, specs, expectedRequests);
            printSummary(result, bound, out);
            out.flush();
            Path dir = this.out != null ? this.out : Path.of(".kvr", "sim-reports", runId);
            Path md = ReportWriter.write(dir, result, bound, commandLine);
            out.println("report: " + md.toAbsolutePath());
            out.flush();
            return md;
        } finally {
            if (published != null) {
                published.close();
            }
        }
    }

    static void printSummary(SimRunner.Result r, ReportWriter.Bound bound, java.io.PrintWriter out) {
        out.printf(Locale.ROOT, "%d requests, virtual %.1f min, wall %.1f s%n", r.requests(), r.virtualEndMs() / 60_000, r.wallSeconds());
        if (bound != null) {
            out.printf(Locale.ROOT, "unbounded-cache bound: block hit rate %.1f %% (%.1f %% in the trace's 512-token blocks)%n",
                    bound.engineBlocks() * 100, bound.traceBlocks() * 100);
        }
        out.printf(Locale.ROOT, "%-16s %9s %10s %8s %9s %11s %11s %9s %7s%n", "policy", "hit rate", "block hit", "Gini", "stale", "TTFT p50", "TTFT p99",
                "req/s", "failed");
        for (PolicyResult p : r.policies()) {
            Summary a = p.overall();
            out.printf(Locale.ROOT, "%-16s %9s %10s %8.3f %9s %9.0fms %9.0fms %9.2f %7d%n", p.policy(), ReportWriter.pct(a.hitRate()),
                    ReportWriter.pct(a.blockHitRate()), a.loadGini(), ReportWriter.pct(a.staleness()), a.ttftP50Ms(), a.ttftP99Ms(),
                    p.throughput(), a.failed());
        }
    }

    /** {@code kvr <command> <args>}, for the report; under {@code kvr}, the parsed args start with the command's own name. */
    static String commandLine(String command, List<String> args) {
        int from = args.indexOf(command);
        List<String> own = from >= 0 ? args.subList(from + 1, args.size()) : args;
        return ("kvr " + command + " " + String.join(" ", own)).trim();
    }

}
