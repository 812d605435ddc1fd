package dev.kvrouter.jobs.config;

import static dev.kvrouter.jobs.config.Declared.*;

import dev.kvrouter.contract.ViewLayout;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;

/**
 * Every option of the kv-router job (routing view and ratios), declared once: key, type, default,
 * what it is for, and the rule its value must meet. Rules relating two options are in the settings
 * record that holds both ({@link KvRouterJobConfig}).
 */
public final class KvRouterJobOptions {

    private KvRouterJobOptions() {}

    /** A Redis key prefix the view can use: keys hash-tag their slot with braces, so none in the prefix. */
    private static final Declared.Rule<String> KEY_PREFIX_RULE =
            v -> v != null && !v.isEmpty() && !v.matches(".*[{}].*") ? null : "must be non-empty and free of { }";

    // --- where things are ---------------------------------------------------------------------

    public static final Declared<String> KAFKA_BOOTSTRAP = declare(ConfigOptions.key("kafka.bootstrap").stringType()
            .noDefaultValue().withDescription("Kafka bootstrap servers, host:port[,host:port]. Required."),
            required());
    public static final Declared<String> SCHEMA_REGISTRY_URL = declare(ConfigOptions.key("schema-registry.url").stringType()
            .noDefaultValue().withDescription("Confluent-compatible schema registry base URL. Required."),
            required());
    public static final Declared<String> REDIS_URL = declare(ConfigOptions.key("redis.url").stringType()
            .noDefaultValue().withDescription("Redis holding the routing view, redis://host:port. Required."),
            required());
    public static final Declared<String> CLIENT_CONFIG = declare(ConfigOptions.key("client-config").stringType()
            .defaultValue("").withDescription("Client properties file for secured Kafka, registry and Redis (SASL/TLS settings; "
                    + "secrets as ${env:NAME} or ${file:PATH}), read where the job is submitted; empty: plaintext without "
                    + "credentials. README, \"Security\"."),
            any());
    public static final Declared<String> TOPIC_PREFIX = declare(ConfigOptions.key("topics.prefix").stringType()
            .defaultValue("").withDescription("Prefix of every topic name (as given to 'kvr topics apply --prefix')."),
            any());
    public static final Declared<String> GROUP_ID = declare(ConfigOptions.key("kafka.group-id").stringType()
            .defaultValue("kvr-routing-view").withDescription("Kafka consumer group of the job's sources."),
            any());
    public static final Declared<String> STARTING_OFFSETS = declare(ConfigOptions.key("kafka.starting-offsets").stringType()
            .defaultValue("latest").withDescription("Where a job without a checkpoint starts reading: latest or earliest."),
            oneOf("latest", "earliest"));

    // --- the view ----------------------------------------------------------------------------

    public static final Declared<String> VIEW_KEY_PREFIX = declare(ConfigOptions.key("view.key-prefix").stringType()
            .defaultValue(ViewLayout.DEFAULT_KEY_PREFIX).withDescription("Prefix of every Redis key of the view."),
            KEY_PREFIX_RULE);
    public static final Declared<Integer> CHUNK_TOKENS = declare(ConfigOptions.key("view.chunk-tokens").intType()
            .defaultValue(ViewLayout.DEFAULT_CHUNK_TOKENS).withDescription("Canonical block size in tokens; a multiple or divisor of every engine's block size."),
            atLeast(1));
    public static final Declared<Integer> TAG_DEPTH = declare(ConfigOptions.key("view.tag-depth").intType()
            .defaultValue(ViewLayout.DEFAULT_TAG_DEPTH).withDescription("Chain depth whose hash tags a block's Redis key (blocks past it share a slot)."),
            atLeast(1));
    public static final Declared<Double> BUSY_FACTOR = declare(ConfigOptions.key("view.busy-factor").doubleType()
            .defaultValue(ViewLayout.DEFAULT_BUSY_FACTOR).withDescription("k: pick spills from an engine whose load exceeds k x the fleet mean and k requests (HOT_ENGINE alerts likewise)."),
            above(1.0));
    public static final Declared<Double> CONFIDENCE_FLOOR = declare(ConfigOptions.key("view.confidence-floor").doubleType()
            .defaultValue(ViewLayout.DEFAULT_CONFIDENCE_FLOOR).withDescription("An entry expires when its confidence exp(-age/residency) falls below this."),
            between(0.0, 1.0));
    public static final Declared<Double> CLIENT_CAP = declare(ConfigOptions.key("view.client-cap").doubleType()
            .defaultValue(ViewLayout.DEFAULT_CLIENT_CAP).withDescription("Pick gives no engine more than this share of one client's requests in flight."),
            fraction());
    public static final Declared<Integer> CLIENT_MIN_INFLIGHT = declare(ConfigOptions.key("view.client-min-inflight").intType()
            .defaultValue(ViewLayout.DEFAULT_CLIENT_MIN_INFLIGHT).withDescription("The client cap applies once a client has this many "
                    + "requests in flight, and from then on its burst copies its prompt to a spare engine before the holders fill."),
            atLeast(1));
    public static final Declared<Duration> VIEW_TTL = declare(ConfigOptions.key("view.ttl").durationType()
            .defaultValue(Duration.ofSeconds(30)).withDescription("With the job stopped, the view vouches for no engine after this long."),
            atLeast(Duration.ofSeconds(1)));
    public static final Declared<Duration> VIEW_FLUSH_INTERVAL = declare(ConfigOptions.key("view.flush-interval").durationType()
            .defaultValue(Duration.ofMillis(50)).withDescription("How often the Redis sink writes what changed (and the view's freshness "
                    + "stamp): the longest a change waits in the sink; shorter costs more, smaller Redis batches."),
            atLeast(Duration.ofMillis(1)));
    public static final Declared<Duration> RESERVATION_TTL = declare(ConfigOptions.key("view.reservation-ttl").durationType()
            .defaultValue(Duration.ofSeconds(60)).withDescription("The longest a balancer's reservation (a placement kvr_pick "
                    + "recorded) counts against its client's cap when the request is never reported done; longer than most requests."),
            atLeast(Duration.ofSeconds(1)));

    // --- the cost view (what pick expects a placement to save) ----------------------------------

    public static final Declared<Integer> COST_LAYERS = declare(ConfigOptions.key("cost.layers").intType()
            .defaultValue(32).withDescription("Model layers, for KV bytes per token (layers x 2 x KV heads x head dim x bytes)."),
            atLeast(1));
    public static final Declared<Integer> COST_KV_HEADS = declare(ConfigOptions.key("cost.kv-heads").intType()
            .defaultValue(8).withDescription("KV heads per layer (after grouped-query attention)."),
            atLeast(1));
    public static final Declared<Integer> COST_HEAD_DIM = declare(ConfigOptions.key("cost.head-dim").intType()
            .defaultValue(128).withDescription("Dimension of one attention head."),
            atLeast(1));
    public static final Declared<Integer> COST_BYTES_PER_ELEMENT = declare(ConfigOptions.key("cost.bytes-per-element").intType()
            .defaultValue(2).withDescription("Bytes per KV element: 2 for fp16/bf16, 1 for fp8."),
            atLeast(1));
    public static final Declared<Double> COST_PREFILL_TOKENS_PER_S = declare(ConfigOptions.key("cost.prefill-tokens-per-s").doubleType()
            .defaultValue(10_000.0).withDescription("Prefill rate of one engine, tokens per second."),
            above(0));
    public static final Declared<Double> COST_FABRIC_BYTES_PER_S = declare(ConfigOptions.key("cost.fabric-bytes-per-s").doubleType()
            .defaultValue(25e9).withDescription("Bandwidth between engines for moving KV, bytes per second."),
            above(0));
    public static final Declared<Double> COST_UNCACHED_PREFILL_WEIGHT = declare(ConfigOptions.key("cost.uncached-prefill-weight").doubleType()
            .defaultValue(3.0).withDescription("How pick weighs the prefill of the prompt blocks an engine lacks against the wait "
                    + "before a request can start there when it places it for the least delay: 1 counts only this request's first "
                    + "token, 2 also the requests that queue behind its prefill, 3 also the cache room a second copy of "
                    + "another engine's blocks takes; more favours cache hits. At 1 a burst on a short prompt spreads sooner "
                    + "but long prompts and a loaded fleet lose (BENCHMARKS.md, run 7)."),
            atLeast(1.0));

    // --- engines -----------------------------------------------------------------------------

    public static final Declared<Duration> DEFAULT_RESIDENCY = declare(ConfigOptions.key("engine.default-residency").durationType()
            .defaultValue(Duration.ofMinutes(10)).withDescription("Residency time of an engine's blocks before any store-to-remove lifetime was seen."),
            atLeast(Duration.ofSeconds(1)));
    public static final Declared<Duration> MAX_RESIDENCY = declare(ConfigOptions.key("engine.max-residency").durationType()
            .defaultValue(Duration.ofHours(1)).withDescription("Cap of the learned residency time (and so of every entry's life)."),
            atLeast(Duration.ofSeconds(1)));
    public static final Declared<Double> RESIDENCY_LEARNING_RATE = declare(ConfigOptions.key("engine.residency-learning-rate").doubleType()
            .defaultValue(0.05).withDescription("Weight of each observed block lifetime in the residency average (0..1]."),
            fraction());
    public static final Declared<Duration> SUSPECT_AFTER = declare(ConfigOptions.key("engine.suspect-after").durationType()
            .defaultValue(Duration.ofSeconds(5)).withDescription("Silence (no load report or KV event) after which an engine is suspect."),
            atLeast(Duration.ofMillis(100)));
    public static final Declared<Duration> DEAD_AFTER = declare(ConfigOptions.key("engine.dead-after").durationType()
            .defaultValue(Duration.ofSeconds(15)).withDescription("Silence after which an engine is dead: its entries leave the view."),
            atLeast(Duration.ofMillis(100)));
    public static final Declared<Duration> STALL_LIMIT = declare(ConfigOptions.key("engine.stall-limit").durationType()
            .defaultValue(Duration.ofMinutes(10)).withDescription("When every engine a task follows falls silent at once, the job's "
                    + "input stalled (a Kafka or registry outage), not the fleet: no engine is suspect or dead for it, and the view keeps "
                    + "its entries (its age tells balancers to trust it no more). Past this much silence of them all, the fleet is taken "
                    + "for dead and its entries leave the view. At or below engine.dead-after the rule changes nothing."),
            atLeast(Duration.ofMillis(100)));
    public static final Declared<Duration> FORGET_AFTER = declare(ConfigOptions.key("engine.forget-after").durationType()
            .defaultValue(Duration.ofMinutes(10)).withDescription("How long a dead engine's record is kept before its state is cleared."),
            atLeast(Duration.ZERO));
    public static final Declared<Integer> QUEUE_CAP = declare(ConfigOptions.key("engine.queue-cap").intType()
            .defaultValue(64).withDescription("An engine with more waiting requests than this is busy."),
            atLeast(1));
    public static final Declared<Integer> MAX_BLOCKS_PER_ENGINE = declare(ConfigOptions.key("engine.max-blocks").intType()
            .defaultValue(1_000_000).withDescription("Engine blocks tracked per engine; stores beyond it are counted and not indexed."),
            atLeast(1));
    public static final Declared<Boolean> KV_ROOM = declare(ConfigOptions.key("engine.kv-room").booleanType()
            .defaultValue(true).withDescription("Publish each engine's free KV room (tokens, from its load reports) in the engine "
                    + "table, so that the pick takes a prompt that does not fit there as waiting for a running request to end "
                    + "(vLLM admits a request only once its blocks fit): where caches are a few prompts deep (BENCHMARKS.md, "
                    + "\"The KV room, interleaved\"). false leaves the field out, as before."),
            any());
    public static final Declared<Duration> ENGINE_UPDATE_INTERVAL = declare(ConfigOptions.key("engine.update-interval").durationType()
            .defaultValue(Duration.ofMillis(500)).withDescription("Load-only changes of an engine reach the view at most this often."),
            atLeast(Duration.ZERO));

    // --- input limits (beyond them an event goes to the dead-letter topic) ----------------------

    public static final Declared<Integer> MAX_EVENTS_PER_BATCH = declare(ConfigOptions.key("limits.max-events-per-batch").intType()
            .defaultValue(10_000).withDescription("Events in one KV event batch."),
            atLeast(1));
    public static final Declared<Integer> MAX_HASHES_PER_EVENT = declare(ConfigOptions.key("limits.max-hashes-per-event").intType()
            .defaultValue(8_192).withDescription("Block hashes in one BlockStored or BlockRemoved."),
            atLeast(1));
    public static final Declared<Integer> MAX_BLOCK_SIZE = declare(ConfigOptions.key("limits.max-block-size").intType()
            .defaultValue(4_096).withDescription("Tokens per engine block."),
            atLeast(1));
    public static final Declared<Integer> MAX_STRING_LENGTH = declare(ConfigOptions.key("limits.max-string-length").intType()
            .defaultValue(dev.kvrouter.common.ViewIds.DEFAULT_MAX_LENGTH).withDescription("Length of ids, model and LoRA names, media, extra keys."),
            atLeast(16));

    // --- ratios ------------------------------------------------------------------------------

    public static final Declared<Duration> RATIOS_WINDOW = declare(ConfigOptions.key("ratios.window").durationType()
            .defaultValue(Duration.ofMinutes(1)).withDescription("Tumbling window of the per-class ratios."),
            atLeast(Duration.ofSeconds(1)));
    public static final Declared<Duration> RATIOS_SLIDING_WINDOW = declare(ConfigOptions.key("ratios.sliding-window").durationType()
            .defaultValue(Duration.ofMinutes(5)).withDescription("Length of the longer, sliding window of the ratios."),
            atLeast(Duration.ofSeconds(1)));
    public static final Declared<Duration> RATIOS_SLIDE = declare(ConfigOptions.key("ratios.slide").durationType()
            .defaultValue(Duration.ofMinutes(1)).withDescription("How often the sliding window reports."),
            atLeast(Duration.ofSeconds(1)));
    public static final Declared<Duration> RATIOS_JOIN_BOUND = declare(ConfigOptions.key("ratios.join-bound").durationType()
            .defaultValue(Duration.ofMinutes(5)).withDescription("How long a decision waits for its outcome (and back); "
                    + "past it the lone side is counted as unmatched."),
            atLeast(Duration.ofSeconds(1)));
    public static final Declared<Double> RATIOS_USD_PER_MILLION = declare(ConfigOptions.key("ratios.usd-per-million-input").doubleType()
            .defaultValue(0.0).withDescription("Input price per million prompt tokens, for recompute avoided in dollars (0: not priced)."),
            atLeast(0.0));
    public static final Declared<Integer> RATIOS_HOT_AT = declare(ConfigOptions.key("ratios.hot-at").intType()
            .defaultValue(50).withDescription("An unlabeled prefix seen this many times (guaranteed count) is in class 'hot'."),
            atLeast(1));
    public static final Declared<Integer> RATIOS_WARM_AT = declare(ConfigOptions.key("ratios.warm-at").intType()
            .defaultValue(2).withDescription("An unlabeled prefix seen this many times is 'warm'; fewer is 'one-shot'. 2: a prefix "
                    + "seen before is reuse (a conversation's second turn is warm)."),
            atLeast(1));
    public static final Declared<Integer> RATIOS_SKETCH_CAPACITY = declare(ConfigOptions.key("ratios.sketch-capacity").intType()
            .defaultValue(10_000).withDescription("Prefixes the popularity sketch tracks (bounded memory)."),
            atLeast(10));

    public static final Declared<Integer> RATIOS_MAX_CLASSES = declare(ConfigOptions.key("ratios.max-classes").intType()
            .defaultValue(64).withDescription("Balancers' prefix-class labels the ratios keep apart at once; past it a new label is "
                    + "counted as 'other' until a known one has not been seen for a sliding window (kvr_class_labels_overflowed)."),
            atLeast(1));

    // --- replicas of hot prefixes ------------------------------------------------------------

    public static final Declared<Integer> REPLICAS_MIN = declare(ConfigOptions.key("replicas.min").intType()
            .defaultValue(2).withDescription("Replica target of a hot prefix (seen ratios.hot-at times): engines that should "
                    + "hold it, so kvr_pick can spread it by load."),
            atLeast(1));
    public static final Declared<Integer> REPLICAS_MAX = declare(ConfigOptions.key("replicas.max").intType()
            .defaultValue(3).withDescription("...raised to this while every live holder is loaded above the fleet mean."),
            atLeast(1));
    public static final Declared<Duration> REPLICAS_INTERVAL = declare(ConfigOptions.key("replicas.interval").durationType()
            .defaultValue(Duration.ofSeconds(30)).withDescription("At most one replication recommendation round per hot prefix "
                    + "this often (time for the last one to take effect and show in the view)."),
            atLeast(Duration.ofSeconds(1)));
    public static final Declared<Integer> REPLICAS_PREFIX_BLOCKS = declare(ConfigOptions.key("replicas.prefix-blocks").intType()
            .defaultValue(64).withDescription("Blocks of a hot prefix a recommendation names at most (the blocks its recent "
                    + "requests share)."),
            atLeast(1));

    public static final Declared<Integer> AFFINITY_MIN_REQUESTS = declare(ConfigOptions.key("ratios.affinity-min-requests").intType()
            .defaultValue(20).withDescription("A class's window with fewer requests than this (that carried the cost view) judges "
                    + "nothing: AFFINITY_NOT_PAYING fires or clears only on windows this large."),
            atLeast(1));

    private static final String CLASS_SWITCH_REMOVED = "a class's affinity is no longer switched off on its hit rate: kvr_pick "
            + "prices every request by the prefill a holder saves against the wait it adds (tune cost.uncached-prefill-weight), and "
            + "the AFFINITY_NOT_PAYING alert reports a class whose placements added more wait than the prefill they saved was "
            + "worth (ratios.affinity-min-requests: the smallest window judged)";

    /**
     * Options older jobs took, each with what replaced it: given, they are ignored with a warning, so
     * that a command line from before keeps starting the job.
     */
    public static final Map<String, String> REMOVED = Map.of(
            "ratios.affinity-off-below", CLASS_SWITCH_REMOVED,
            "ratios.affinity-on-above", CLASS_SWITCH_REMOVED);

    public static final Declared<Double> ALERT_STALENESS_ABOVE = declare(ConfigOptions.key("alerts.staleness-above").doubleType()
            .defaultValue(0.2).withDescription("A class whose staleness ratio exceeds this (over at least ratios.affinity-min-requests "
                    + "routed for affinity) raises a STALE_VIEW alert."),
            fraction());

    // --- running -----------------------------------------------------------------------------

    public static final Declared<Duration> CHECKPOINT_INTERVAL = declare(ConfigOptions.key("job.checkpoint-interval").durationType()
            .defaultValue(Duration.ofSeconds(60)).withDescription("Checkpoint interval. The view is a cache rebuilt from Kafka: "
                    + "after a failure, up to this much input is replayed (harmlessly); each checkpoint snapshots the state, "
                    + "which costs CPU on the heap backend, so not too often."),
            atLeast(Duration.ofMillis(100)));
    public static final Declared<String> STATE_BACKEND = declare(ConfigOptions.key("job.state-backend").stringType()
            .defaultValue("").withDescription("hashmap, or rocksdb (with incremental checkpoints: a checkpoint then costs what "
                    + "changed, not the whole state); empty keeps the cluster's setting."),
            oneOf("", "hashmap", "rocksdb"));
    public static final Declared<String> CHECKPOINT_DIR = declare(ConfigOptions.key("job.checkpoint-dir").stringType()
            .defaultValue("").withDescription("Where checkpoints go (e.g. file:///var/kvr/checkpoints, s3://...); empty keeps the "
                    + "cluster's setting."),
            any());
    public static final Declared<Boolean> STATE_CHANGELOG = declare(ConfigOptions.key("job.state-changelog").booleanType()
            .defaultValue(false).withDescription("Log every state change (Flink's changelog state backend): a checkpoint then "
                    + "uploads the changes since the last one, and the full snapshot of the state runs only every "
                    + "state.changelog.periodic-materialize.interval (Flink's setting, 10 min by default) instead of at every "
                    + "checkpoint. Measured: the view's freshness p99 under checkpoints about halved at the same CPU per entry "
                    + "(BENCHMARKS.md). Needs job.checkpoint-dir. The local run keeps the log under job.checkpoint-dir/changelog; "
                    + "on a cluster the TaskManagers' own configuration names the storage (state.changelog.storage: filesystem "
                    + "and state.changelog.dstl.dfs.base-path: Flink reads them per TaskManager, not per job)."),
            any());
    public static final Declared<Duration> BUFFER_TIMEOUT = declare(ConfigOptions.key("job.buffer-timeout").durationType()
            .defaultValue(Duration.ofMillis(10)).withDescription("Longest a record waits in a network buffer between operators (latency vs throughput)."),
            atLeast(Duration.ZERO));
    public static final Declared<Integer> PARALLELISM = declare(ConfigOptions.key("job.parallelism").intType()
            .defaultValue(1).withDescription("Parallelism of the job's keyed operators."),
            atLeast(1));

    /** Every option above, for validation of unknown keys and for --help. */
    public static List<ConfigOption<?>> all() {
        List<ConfigOption<?>> options = new ArrayList<>();
        for (Field f : KvRouterJobOptions.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == Declared.class) {
                try {
                    options.add(((Declared<?>) f.get(null)).option());
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return options;
    }
}
