package dev.kvrouter.jobs.config;

import dev.kvrouter.contract.ViewLayout;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;

/** Every option of the kv-router job (routing view and ratios), declared once, with its default and what it is for. */
public final class RoutingViewOptions {

    private RoutingViewOptions() {}

    // --- where things are ---------------------------------------------------------------------

    public static final ConfigOption<String> KAFKA_BOOTSTRAP = ConfigOptions.key("kafka.bootstrap").stringType()
            .noDefaultValue().withDescription("Kafka bootstrap servers, host:port[,host:port]. Required.");
    public static final ConfigOption<String> SCHEMA_REGISTRY_URL = ConfigOptions.key("schema-registry.url").stringType()
            .noDefaultValue().withDescription("Confluent-compatible schema registry base URL. Required.");
    public static final ConfigOption<String> REDIS_URL = ConfigOptions.key("redis.url").stringType()
            .noDefaultValue().withDescription("Redis holding the routing view, redis://host:port. Required.");
    public static final ConfigOption<String> TOPIC_PREFIX = ConfigOptions.key("topics.prefix").stringType()
            .defaultValue("").withDescription("Prefix of every topic name (as given to 'kvr topics apply --prefix').");
    public static final ConfigOption<String> GROUP_ID = ConfigOptions.key("kafka.group-id").stringType()
            .defaultValue("kvr-routing-view").withDescription("Kafka consumer group of the job's sources.");
    public static final ConfigOption<String> STARTING_OFFSETS = ConfigOptions.key("kafka.starting-offsets").stringType()
            .defaultValue("latest").withDescription("Where a job without a checkpoint starts reading: latest or earliest.");

    // --- the view ----------------------------------------------------------------------------

    public static final ConfigOption<String> VIEW_KEY_PREFIX = ConfigOptions.key("view.key-prefix").stringType()
            .defaultValue(ViewLayout.DEFAULT_KEY_PREFIX).withDescription("Prefix of every Redis key of the view.");
    public static final ConfigOption<Integer> CHUNK_TOKENS = ConfigOptions.key("view.chunk-tokens").intType()
            .defaultValue(ViewLayout.DEFAULT_CHUNK_TOKENS).withDescription("Canonical block size in tokens; a multiple or divisor of every engine's block size.");
    public static final ConfigOption<Integer> TAG_DEPTH = ConfigOptions.key("view.tag-depth").intType()
            .defaultValue(ViewLayout.DEFAULT_TAG_DEPTH).withDescription("Chain depth whose hash tags a block's Redis key (blocks past it share a slot).");
    public static final ConfigOption<Double> BUSY_FACTOR = ConfigOptions.key("view.busy-factor").doubleType()
            .defaultValue(ViewLayout.DEFAULT_BUSY_FACTOR).withDescription("k: pick spills from an engine whose load exceeds k x the fleet mean and k requests (HOT_ENGINE alerts likewise).");
    public static final ConfigOption<Double> CONFIDENCE_FLOOR = ConfigOptions.key("view.confidence-floor").doubleType()
            .defaultValue(ViewLayout.DEFAULT_CONFIDENCE_FLOOR).withDescription("An entry expires when its confidence exp(-age/residency) falls below this.");
    public static final ConfigOption<Double> CLIENT_CAP = ConfigOptions.key("view.client-cap").doubleType()
            .defaultValue(ViewLayout.DEFAULT_CLIENT_CAP).withDescription("Pick gives no engine more than this share of one client's requests in flight.");
    public static final ConfigOption<Integer> CLIENT_MIN_INFLIGHT = ConfigOptions.key("view.client-min-inflight").intType()
            .defaultValue(ViewLayout.DEFAULT_CLIENT_MIN_INFLIGHT).withDescription("The client cap applies once a client has this many "
                    + "requests in flight, and from then on its burst copies its prompt to a spare engine before the holders fill.");
    public static final ConfigOption<Duration> VIEW_TTL = ConfigOptions.key("view.ttl").durationType()
            .defaultValue(Duration.ofSeconds(30)).withDescription("With the job stopped, the view vouches for no engine after this long.");
    public static final ConfigOption<Duration> VIEW_FLUSH_INTERVAL = ConfigOptions.key("view.flush-interval").durationType()
            .defaultValue(Duration.ofMillis(50)).withDescription("How often the Redis sink writes what changed (and the view's freshness "
                    + "stamp): the longest a change waits in the sink; shorter costs more, smaller Redis batches.");
    public static final ConfigOption<Duration> RESERVATION_TTL = ConfigOptions.key("view.reservation-ttl").durationType()
            .defaultValue(Duration.ofSeconds(60)).withDescription("The longest a balancer's reservation (a placement kvr_pick "
                    + "recorded) counts against its client's cap when the request is never reported done; longer than most requests.");

    // --- the cost view (what pick expects a placement to save) ----------------------------------

    public static final ConfigOption<Integer> COST_LAYERS = ConfigOptions.key("cost.layers").intType()
            .defaultValue(32).withDescription("Model layers, for KV bytes per token (layers x 2 x KV heads x head dim x bytes).");
    public static final ConfigOption<Integer> COST_KV_HEADS = ConfigOptions.key("cost.kv-heads").intType()
            .defaultValue(8).withDescription("KV heads per layer (after grouped-query attention).");
    public static final ConfigOption<Integer> COST_HEAD_DIM = ConfigOptions.key("cost.head-dim").intType()
            .defaultValue(128).withDescription("Dimension of one attention head.");
    public static final ConfigOption<Integer> COST_BYTES_PER_ELEMENT = ConfigOptions.key("cost.bytes-per-element").intType()
            .defaultValue(2).withDescription("Bytes per KV element: 2 for fp16/bf16, 1 for fp8.");
    public static final ConfigOption<Double> COST_PREFILL_TOKENS_PER_S = ConfigOptions.key("cost.prefill-tokens-per-s").doubleType()
            .defaultValue(10_000.0).withDescription("Prefill rate of one engine, tokens per second.");
    public static final ConfigOption<Double> COST_FABRIC_BYTES_PER_S = ConfigOptions.key("cost.fabric-bytes-per-s").doubleType()
            .defaultValue(25e9).withDescription("Bandwidth between engines for moving KV, bytes per second.");
    public static final ConfigOption<Double> COST_UNCACHED_PREFILL_WEIGHT = ConfigOptions.key("cost.uncached-prefill-weight").doubleType()
            .defaultValue(3.0).withDescription("How pick weighs the prefill of the prompt blocks an engine lacks against the wait "
                    + "before a request can start there when it places it for the least delay: 1 counts only this request's first "
                    + "token, 2 also the requests that queue behind its prefill, 3 also the cache room a second copy of "
                    + "another engine's blocks takes; more favours cache hits. At 1 a burst on a short prompt spreads sooner "
                    + "but long prompts and a loaded fleet lose (BENCHMARKS.md, run 7).");

    // --- engines -----------------------------------------------------------------------------

    public static final ConfigOption<Duration> DEFAULT_RESIDENCY = ConfigOptions.key("engine.default-residency").durationType()
            .defaultValue(Duration.ofMinutes(10)).withDescription("Residency time of an engine's blocks before any store-to-remove lifetime was seen.");
    public static final ConfigOption<Duration> MAX_RESIDENCY = ConfigOptions.key("engine.max-residency").durationType()
            .defaultValue(Duration.ofHours(1)).withDescription("Cap of the learned residency time (and so of every entry's life).");
    public static final ConfigOption<Double> RESIDENCY_LEARNING_RATE = ConfigOptions.key("engine.residency-learning-rate").doubleType()
            .defaultValue(0.05).withDescription("Weight of each observed block lifetime in the residency average (0..1].");
    public static final ConfigOption<Duration> SUSPECT_AFTER = ConfigOptions.key("engine.suspect-after").durationType()
            .defaultValue(Duration.ofSeconds(5)).withDescription("Silence (no load report or KV event) after which an engine is suspect.");
    public static final ConfigOption<Duration> DEAD_AFTER = ConfigOptions.key("engine.dead-after").durationType()
            .defaultValue(Duration.ofSeconds(15)).withDescription("Silence after which an engine is dead: its entries leave the view.");
    public static final ConfigOption<Duration> FORGET_AFTER = ConfigOptions.key("engine.forget-after").durationType()
            .defaultValue(Duration.ofMinutes(10)).withDescription("How long a dead engine's record is kept before its state is cleared.");
    public static final ConfigOption<Integer> QUEUE_CAP = ConfigOptions.key("engine.queue-cap").intType()
            .defaultValue(64).withDescription("An engine with more waiting requests than this is busy.");
    public static final ConfigOption<Integer> MAX_BLOCKS_PER_ENGINE = ConfigOptions.key("engine.max-blocks").intType()
            .defaultValue(1_000_000).withDescription("Engine blocks tracked per engine; stores beyond it are counted and not indexed.");
    public static final ConfigOption<Duration> ENGINE_UPDATE_INTERVAL = ConfigOptions.key("engine.update-interval").durationType()
            .defaultValue(Duration.ofMillis(500)).withDescription("Load-only changes of an engine reach the view at most this often.");

    // --- input limits (beyond them an event goes to the dead-letter topic) ----------------------

    public static final ConfigOption<Integer> MAX_EVENTS_PER_BATCH = ConfigOptions.key("limits.max-events-per-batch").intType()
            .defaultValue(10_000).withDescription("Events in one KV event batch.");
    public static final ConfigOption<Integer> MAX_HASHES_PER_EVENT = ConfigOptions.key("limits.max-hashes-per-event").intType()
            .defaultValue(8_192).withDescription("Block hashes in one BlockStored or BlockRemoved.");
    public static final ConfigOption<Integer> MAX_BLOCK_SIZE = ConfigOptions.key("limits.max-block-size").intType()
            .defaultValue(4_096).withDescription("Tokens per engine block.");
    public static final ConfigOption<Integer> MAX_STRING_LENGTH = ConfigOptions.key("limits.max-string-length").intType()
            .defaultValue(512).withDescription("Length of ids, model and LoRA names, media, extra keys.");

    // --- ratios ------------------------------------------------------------------------------

    public static final ConfigOption<Duration> RATIOS_WINDOW = ConfigOptions.key("ratios.window").durationType()
            .defaultValue(Duration.ofMinutes(1)).withDescription("Tumbling window of the per-class ratios.");
    public static final ConfigOption<Duration> RATIOS_SLIDING_WINDOW = ConfigOptions.key("ratios.sliding-window").durationType()
            .defaultValue(Duration.ofMinutes(5)).withDescription("Length of the longer, sliding window of the ratios.");
    public static final ConfigOption<Duration> RATIOS_SLIDE = ConfigOptions.key("ratios.slide").durationType()
            .defaultValue(Duration.ofMinutes(1)).withDescription("How often the sliding window reports.");
    public static final ConfigOption<Duration> RATIOS_JOIN_BOUND = ConfigOptions.key("ratios.join-bound").durationType()
            .defaultValue(Duration.ofMinutes(5)).withDescription("How long a decision waits for its outcome (and back); "
                    + "past it the lone side is counted as unmatched.");
    public static final ConfigOption<Double> RATIOS_USD_PER_MILLION = ConfigOptions.key("ratios.usd-per-million-input").doubleType()
            .defaultValue(0.0).withDescription("Input price per million prompt tokens, for recompute avoided in dollars (0: not priced).");
    public static final ConfigOption<Integer> RATIOS_HOT_AT = ConfigOptions.key("ratios.hot-at").intType()
            .defaultValue(50).withDescription("An unlabeled prefix seen this many times (guaranteed count) is in class 'hot'.");
    public static final ConfigOption<Integer> RATIOS_WARM_AT = ConfigOptions.key("ratios.warm-at").intType()
            .defaultValue(2).withDescription("An unlabeled prefix seen this many times is 'warm'; fewer is 'one-shot'. 2: a prefix "
                    + "seen before is reuse (a conversation's second turn is warm).");
    public static final ConfigOption<Integer> RATIOS_SKETCH_CAPACITY = ConfigOptions.key("ratios.sketch-capacity").intType()
            .defaultValue(10_000).withDescription("Prefixes the popularity sketch tracks (bounded memory).");

    // --- replicas of hot prefixes ------------------------------------------------------------

    public static final ConfigOption<Integer> REPLICAS_MIN = ConfigOptions.key("replicas.min").intType()
            .defaultValue(2).withDescription("Replica target of a hot prefix (seen ratios.hot-at times): engines that should "
                    + "hold it, so kvr_pick can spread it by load.");
    public static final ConfigOption<Integer> REPLICAS_MAX = ConfigOptions.key("replicas.max").intType()
            .defaultValue(3).withDescription("...raised to this while every live holder is loaded above the fleet mean.");
    public static final ConfigOption<Duration> REPLICAS_INTERVAL = ConfigOptions.key("replicas.interval").durationType()
            .defaultValue(Duration.ofSeconds(30)).withDescription("At most one replication recommendation round per hot prefix "
                    + "this often (time for the last one to take effect and show in the view).");
    public static final ConfigOption<Integer> REPLICAS_PREFIX_BLOCKS = ConfigOptions.key("replicas.prefix-blocks").intType()
            .defaultValue(64).withDescription("Blocks of a hot prefix a recommendation names at most (the blocks its recent "
                    + "requests share).");

    public static final ConfigOption<Double> AFFINITY_OFF_BELOW = ConfigOptions.key("ratios.affinity-off-below").doubleType()
            .defaultValue(0.05).withDescription("A class whose windowed hit rate falls below this gets affinity off in pick.");
    public static final ConfigOption<Double> AFFINITY_ON_ABOVE = ConfigOptions.key("ratios.affinity-on-above").doubleType()
            .defaultValue(0.15).withDescription("...and back on once the share of its requests whose best holder matched a block (what "
                    + "affinity would have hit, measured while it is off) climbs above this (hysteresis).");
    public static final ConfigOption<Integer> AFFINITY_MIN_REQUESTS = ConfigOptions.key("ratios.affinity-min-requests").intType()
            .defaultValue(20).withDescription("Windows with fewer requests of a class leave its affinity setting as it is.");

    public static final ConfigOption<Double> ALERT_STALENESS_ABOVE = ConfigOptions.key("alerts.staleness-above").doubleType()
            .defaultValue(0.2).withDescription("A class whose staleness ratio exceeds this (over at least ratios.affinity-min-requests "
                    + "routed for affinity) raises a STALE_VIEW alert.");

    // --- running -----------------------------------------------------------------------------

    public static final ConfigOption<Duration> CHECKPOINT_INTERVAL = ConfigOptions.key("job.checkpoint-interval").durationType()
            .defaultValue(Duration.ofSeconds(60)).withDescription("Checkpoint interval. The view is a cache rebuilt from Kafka: "
                    + "after a failure, up to this much input is replayed (harmlessly); each checkpoint snapshots the state, "
                    + "which costs CPU on the heap backend, so not too often.");
    public static final ConfigOption<String> STATE_BACKEND = ConfigOptions.key("job.state-backend").stringType()
            .defaultValue("").withDescription("hashmap, or rocksdb (with incremental checkpoints: a checkpoint then costs what "
                    + "changed, not the whole state); empty keeps the cluster's setting.");
    public static final ConfigOption<String> CHECKPOINT_DIR = ConfigOptions.key("job.checkpoint-dir").stringType()
            .defaultValue("").withDescription("Where checkpoints go (e.g. file:///var/kvr/checkpoints, s3://...); empty keeps the "
                    + "cluster's setting.");
    public static final ConfigOption<Duration> BUFFER_TIMEOUT = ConfigOptions.key("job.buffer-timeout").durationType()
            .defaultValue(Duration.ofMillis(10)).withDescription("Longest a record waits in a network buffer between operators (latency vs throughput).");
    public static final ConfigOption<Integer> PARALLELISM = ConfigOptions.key("job.parallelism").intType()
            .defaultValue(1).withDescription("Parallelism of the job's keyed operators.");

    /** An option's description as plain text. */
    public static String describe(ConfigOption<?> option) {
        return new org.apache.flink.configuration.description.HtmlFormatter().format(option.description())
                .replace("&lt;", "<").replace("&gt;", ">").replace("&#39;", "'").replace("&quot;", "\"").replace("&amp;", "&");
    }

    /** Every option above, for validation of unknown keys and for --help. */
    public static List<ConfigOption<?>> all() {
        List<ConfigOption<?>> options = new ArrayList<>();
        for (Field f : RoutingViewOptions.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == ConfigOption.class) {
                try {
                    options.add((ConfigOption<?>) f.get(null));
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return options;
    }
}
