package dev.kvrouter.jobs.view;

import dev.kvrouter.alerts.Alert;
import dev.kvrouter.common.TopicNames;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.dlq.DeadLetter;
import dev.kvrouter.events.EngineStateChange;
import dev.kvrouter.jobs.config.Declared;
import dev.kvrouter.jobs.config.KafkaSettings;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.jobs.config.KvRouterJobOptions;
import dev.kvrouter.jobs.io.DecodeFunction;
import dev.kvrouter.jobs.io.RawRecord;
import dev.kvrouter.jobs.ratios.RatiosWorkflow;
import dev.kvrouter.jobs.view.functions.ViewLossProbe;
import dev.kvrouter.jobs.view.model.ViewResync;
import dev.kvrouter.metrics.ClassRatios;
import dev.kvrouter.redis.RedisViewSink;
import dev.kvrouter.redis.RedisViewSinkOptions;
import dev.kvrouter.replicas.ReplicationRecommendation;
import dev.kvrouter.schemas.flink.RegistryAvroValueSchema;
import dev.kvrouter.schemas.flink.RegistrySchemaCoderProvider;
import dev.kvrouter.view.ViewChange;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.avro.specific.SpecificRecord;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.SerializationSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateChangelogOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;

/**
 * The kv-router job: reads config, wires Kafka, the registry and Redis to
 * {@link RoutingViewWorkflow} (the routing view) and {@link RatiosWorkflow} (the per-class ratios),
 * and runs. Options: {@code --help}.
 */
public final class KvRouterJob {

    /** The name the job runs under (Flink's web UI, logs, 'flink list'): it keeps the routing view and the ratios. */
    public static final String JOB_NAME = "kv-router: routing view and ratios";

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(KvRouterJob.class);

    private KvRouterJob() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && ("--help".equals(args[0]) || "-h".equals(args[0]))) {
            System.out.println(help());
            return;
        }
        KvRouterJobConfig config = KvRouterJobConfig.from(parseArgs(args));
        StreamExecutionEnvironment env = environment(config);
        wire(env, config);
        env.execute(JOB_NAME);
    }

    /** An environment as the job needs it: no Kryo fallback, object reuse, checkpoints on. */
    public static StreamExecutionEnvironment environment(KvRouterJobConfig config) {
        return environment(config, null);
    }

    /**
     * The same, starting from a savepoint or a retained checkpoint ({@code flink run -s} does this
     * for a cluster; the local runner's {@code ./kvr job run --from-savepoint} does it here).
     *
     * @param fromSavepoint the savepoint's or checkpoint's directory; null to start from nothing
     */
    public static StreamExecutionEnvironment environment(KvRouterJobConfig config, String fromSavepoint) {
        return environment(config, fromSavepoint, new Configuration());
    }

    /**
     * The same, with Flink settings of the local run's cluster on top (for example
     * {@link #prometheusReporter}); a job submitted to a cluster takes those from the cluster's config.
     */
    public static StreamExecutionEnvironment environment(KvRouterJobConfig config, String fromSavepoint, Configuration cluster) {
        Configuration conf = new Configuration(cluster);
        if (fromSavepoint != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, fromSavepoint);
        }
        conf.set(PipelineOptions.GENERIC_TYPES, false);
        // Chained operators hand records over without a copy (+13 % ingest drain, BENCHMARKS.md ingest run K). Safe
        // because every function emits new objects and leaves what it reads unchanged: keep it so.
        conf.set(PipelineOptions.OBJECT_REUSE, true);
        if (!config.runtime().stateBackend().isBlank()) {
            conf.set(org.apache.flink.configuration.StateBackendOptions.STATE_BACKEND, config.runtime().stateBackend());
            conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, "rocksdb".equals(config.runtime().stateBackend()));
        }
        if (!config.runtime().checkpointDir().isBlank()) {
            conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
            conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, config.runtime().checkpointDir());
        }
        if (config.runtime().stateChangelog()) {
            // Checkpoints upload the state's changes since the last one; the full snapshot of the heap
            // (which competed with the view's writes for the cores) runs only at each materialization.
            // The storage settings count where this configuration starts the cluster (the local run):
            // a cluster's TaskManagers read their own (README, "Failure and recovery").
            conf.set(StateChangelogOptions.ENABLE_STATE_CHANGE_LOG, true);
            conf.set(StateChangelogOptions.STATE_CHANGE_LOG_STORAGE, "filesystem");
            conf.set(CHANGELOG_BASE_PATH, config.runtime().changelogDir());
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        recoveryDefaults(env.getConfiguration(), conf);
        env.configure(conf);
        // At-least-once: every output is idempotent (full values in Redis, keyed changelogs), so
        // checkpoint barriers need no alignment, which would hold back the faster inputs.
        env.enableCheckpointing(config.runtime().checkpointInterval().toMillis(), org.apache.flink.core.execution.CheckpointingMode.AT_LEAST_ONCE);
        env.setParallelism(config.runtime().parallelism());
        env.setBufferTimeout(config.runtime().bufferTimeout().toMillis());
        return env;
    }

    /** flink-dstl-dfs's {@code FsStateChangelogOptions.BASE_PATH}, by its key: the job does not compile against the storage. */
    static final ConfigOption<String> CHANGELOG_BASE_PATH = ConfigOptions.key("state.changelog.dstl.dfs.base-path").stringType().noDefaultValue();

    /** The reporter's name in Flink's {@code metrics.reporter.<name>.*} keys. */
    public static final String PROMETHEUS_REPORTER = "prom";

    /**
     * Flink's Prometheus reporter ({@code flink-metrics-prometheus}) serving {@code /metrics} on this
     * port (a range such as {@code 9249-9259} lets several TaskManagers on one host each take one):
     * the settings a cluster's config file takes, as {@code ./kvr job run --metrics-port} sets them.
     */
    public static Configuration prometheusReporter(String port) {
        String prefix = "metrics.reporter." + PROMETHEUS_REPORTER + ".";
        return Configuration.fromMap(Map.of(prefix + "factory.class", "org.apache.flink.metrics.prometheus.PrometheusReporterFactory",
                prefix + "port", port));
    }

    /**
     * How the job survives its own failures, unless the cluster or {@code flink run -D} says otherwise
     * (Flink's own keys: {@code restart-strategy.type}, {@code execution.checkpointing.externalized-checkpoint-retention}):
     * restarts with exponential delay, 1 s doubling to 1 min with 10 % jitter, back to 1 s after
     * 10 min without failure, never giving up (a crash-looping job is visible in its restart count
     * and its view's age; a job that gave up is a silent outage); checkpoints kept when the job is
     * cancelled, so it can be started again from the last one (README, "Failure and recovery").
     */
    static void recoveryDefaults(org.apache.flink.configuration.ReadableConfig given, Configuration conf) {
        if (given.getOptional(RestartStrategyOptions.RESTART_STRATEGY).isEmpty()) {
            conf.set(RestartStrategyOptions.RESTART_STRATEGY, "exponential-delay");
            conf.set(RestartStrategyOptions.RESTART_STRATEGY_EXPONENTIAL_DELAY_INITIAL_BACKOFF, Duration.ofSeconds(1));
            conf.set(RestartStrategyOptions.RESTART_STRATEGY_EXPONENTIAL_DELAY_MAX_BACKOFF, Duration.ofMinutes(1));
            conf.set(RestartStrategyOptions.RESTART_STRATEGY_EXPONENTIAL_DELAY_BACKOFF_MULTIPLIER, 2.0);
            conf.set(RestartStrategyOptions.RESTART_STRATEGY_EXPONENTIAL_DELAY_JITTER_FACTOR, 0.1);
            conf.set(RestartStrategyOptions.RESTART_STRATEGY_EXPONENTIAL_DELAY_RESET_BACKOFF_THRESHOLD, Duration.ofMinutes(10));
            conf.set(RestartStrategyOptions.RESTART_STRATEGY_EXPONENTIAL_DELAY_ATTEMPTS, Integer.MAX_VALUE);
        }
        if (given.getOptional(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION).isEmpty()) {
            conf.set(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION, ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        }
    }

    /** The Kafka sources, the Redis and Kafka sinks, around the workflow. */
    public static void wire(StreamExecutionEnvironment env, KvRouterJobConfig config) {
        // Removed options were given: said where the job's submitter reads (its log), not a reason to refuse to start.
        config.warnings().forEach(w -> LOG.warn("kv-router job: {}", w));
        DataStream<RawRecord> kvEvents = env.fromSource(source(config, config.kafka().topic(TopicNames.KV_EVENTS)),
                WatermarkStrategy.noWatermarks(), "kv events").uid("source-kv-events");
        DataStream<RawRecord> loads = env.fromSource(source(config, config.kafka().topic(TopicNames.ENGINE_LOAD)),
                WatermarkStrategy.noWatermarks(), "engine load").uid("source-engine-load");
        DataStream<RawRecord> decisions = env.fromSource(source(config, config.kafka().topic(TopicNames.ROUTING_DECISIONS)),
                WatermarkStrategy.noWatermarks(), "routing decisions").uid("source-routing-decisions");
        DataStream<RawRecord> outcomes = env.fromSource(source(config, config.kafka().topic(TopicNames.REQUEST_OUTCOMES)),
                WatermarkStrategy.noWatermarks(), "request outcomes").uid("source-request-outcomes");
        // The ratios first: the hot prefixes they find feed the view's replica planner, and the
        // cached blocks each request found confirm the view's entries.
        DecodeFunction.Decoder decoder = DecodeFunction.registry(config.security().registryWith(config.kafka().schemaRegistryUrl()));
        RatiosWorkflow.Outputs fromRequests = RatiosWorkflow.build(config, new RatiosWorkflow.Sources(decisions, outcomes, decoder),
                new RatiosWorkflow.Sinks(
                kafkaSink(config, config.kafka().topic(TopicNames.CLASS_RATIOS), ClassRatios.class,
                        r -> r.getPrefixClass().getBytes(StandardCharsets.UTF_8)),
                viewSink(config),
                kafkaSink(config, config.kafka().topic(TopicNames.DEAD_LETTER), DeadLetter.class,
                        d -> d.getSourceTopic().getBytes(StandardCharsets.UTF_8)),
                alertsSink(config)));

        RedisViewSink view = viewSink(config);
        RoutingViewWorkflow.build(config, new RoutingViewWorkflow.Sources(kvEvents, loads,
                        fromRequests.hotPrefixes(), fromRequests.confirmations(), fromRequests.engineSpeeds(),
                        viewResyncs(env, config), decoder),
                new RoutingViewWorkflow.Sinks(
                view,
                kafkaSink(config, config.kafka().topic(TopicNames.VIEW_CHANGELOG), ViewChange.class,
                        c -> (ViewLayout.hex(c.getBlockHash()) + "/" + c.getEngineId()).getBytes(StandardCharsets.UTF_8)),
                kafkaSink(config, config.kafka().topic(TopicNames.ENGINE_STATE), EngineStateChange.class,
                        s -> s.getEngine().getBytes(StandardCharsets.UTF_8)),
                kafkaSink(config, config.kafka().topic(TopicNames.DEAD_LETTER), DeadLetter.class,
                        d -> d.getSourceTopic().getBytes(StandardCharsets.UTF_8)),
                alertsSink(config),
                kafkaSink(config, config.kafka().topic(TopicNames.REPLICATION_RECOMMENDATIONS), ReplicationRecommendation.class,
                        r -> ViewLayout.hex(r.getRootBlock()).getBytes(StandardCharsets.UTF_8))));
    }

    static KafkaSink<Alert> alertsSink(KvRouterJobConfig config) {
        return kafkaSink(config, config.kafka().topic(TopicNames.ALERTS), Alert.class,
                a -> (a.getKind() + "/" + a.getSubject()).getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Requests to write the view again: one look at Redis a second ({@link ViewLossProbe}), paced by
     * a generated tick, one instance.
     */
    static DataStream<ViewResync> viewResyncs(StreamExecutionEnvironment env, KvRouterJobConfig config) {
        GeneratorFunction<Long, Long> tick = index -> index;
        return env.fromSource(new DataGeneratorSource<>(tick, Long.MAX_VALUE, RateLimiterStrategy.perSecond(1), Types.LONG),
                        WatermarkStrategy.noWatermarks(), "redis view probe tick").uid("source-view-probe-tick").setParallelism(1)
                .flatMap(new ViewLossProbe(viewSinkOptions(config))).returns(TypeInformation.of(ViewResync.class))
                .name("redis view probe").uid("view-loss-probe").setParallelism(1);
    }

    static RedisViewSink viewSink(KvRouterJobConfig config) {
        return new RedisViewSink(viewSinkOptions(config));
    }

    static RedisViewSinkOptions viewSinkOptions(KvRouterJobConfig config) {
        return RedisViewSinkOptions.defaults(config.view().redisUrl())
                .withSecurity(config.security().redis())
                .withKeyPrefix(config.view().keyPrefix())
                .withView(config.view().chunkTokens(), config.view().tagDepth(), config.view().busyFactor(), config.view().confidenceFloor(),
                        config.view().ttl().toMillis())
                .withClientCap(config.view().clientCap(), config.view().clientMinInflight())
                .withFlushInterval(config.view().flushInterval().toMillis())
                .withMeta(metaFigures(config));
    }

    /**
     * The meta figures a job with this configuration writes beside the view, but its clock's
     * ({@code kvr bench pick} builds its view with them).
     */
    public static Map<String, String> viewMeta(KvRouterJobConfig config) {
        return viewSinkOptions(config).metaFields();
    }

    /** The cost model's figures for pick's cost view and the reservations' life (redis-sink/README.md). */
    static Map<String, String> metaFigures(KvRouterJobConfig config) {
        var model = config.cost().model();
        return Map.of(
                "reservation_ttl_ms", Long.toString(config.view().reservationTtl().toMillis()),
                "kv_bytes_per_token", Long.toString(model.kvBytes(1)),
                "prefill_tokens_per_s", Double.toString(model.prefillTokensPerS()),
                "fabric_bytes_per_s", Double.toString(model.fabricBytesPerS()),
                "usd_per_million_input", Double.toString(model.usdPerMillionInput()),
                "uncached_prefill_weight", Double.toString(config.cost().uncachedPrefillWeight()));
    }

    static KafkaSource<RawRecord> source(KvRouterJobConfig config, String topic) {
        KafkaSettings kafka = config.kafka();
        return KafkaSource.<RawRecord>builder()
                // The client config's security settings first: the job's own settings below win.
                .setProperties(kafkaProperties(config))
                .setBootstrapServers(kafka.bootstrap())
                .setTopics(topic)
                .setGroupId(kafka.groupId())
                .setStartingOffsets(OffsetsInitializer.committedOffsets("earliest".equals(kafka.startingOffsets())
                        ? OffsetResetStrategy.EARLIEST : OffsetResetStrategy.LATEST))
                .setDeserializer(new RawRecordDeserializer())
                .build();
    }

    /** The client config's Kafka settings (security), for every source and sink. */
    static java.util.Properties kafkaProperties(KvRouterJobConfig config) {
        java.util.Properties p = new java.util.Properties();
        p.putAll(config.security().kafka());
        return p;
    }

    static <T extends SpecificRecord> KafkaSink<T> kafkaSink(KvRouterJobConfig config, String topic, Class<T> type,
                                                            SerializationSchema<T> key) {
        KafkaSettings kafka = config.kafka();
        Map<String, String> registry = config.security().registryWith(kafka.schemaRegistryUrl());
        // Analysis outputs, one record per view change: batch them (linger) rather than wake the
        // producer's sender thread for every record.
        java.util.Properties producer = kafkaProperties(config);
        producer.setProperty("linger.ms", "20");
        producer.setProperty("batch.size", Integer.toString(256 * 1024));
        return KafkaSink.<T>builder()
                .setBootstrapServers(kafka.bootstrap())
                .setKafkaProducerConfig(producer)
                .setRecordSerializer(KafkaRecordSerializationSchema.<T>builder()
                        .setTopic(topic)
                        .setKeySerializationSchema(key)
                        .setValueSerializationSchema(new RegistryAvroValueSchema<>(type,
                                RegistrySchemaCoderProvider.forTopicValue(registry, topic)))
                        .build())
                .setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE)
                .build();
    }

    /** Keeps the record's bytes and origin; decoding happens in the job, where failures become dead letters. */
    static final class RawRecordDeserializer implements KafkaRecordDeserializationSchema<RawRecord> {
        @Override
        public void deserialize(ConsumerRecord<byte[], byte[]> r, Collector<RawRecord> out) {
            out.collect(new RawRecord(r.topic(), r.partition(), r.offset(), r.timestamp(), r.key(), r.value()));
        }

        @Override
        public TypeInformation<RawRecord> getProducedType() {
            return TypeInformation.of(RawRecord.class);
        }
    }

    /** {@code --key value} or {@code --key=value} pairs. */
    static Map<String, String> parseArgs(String[] args) {
        Map<String, String> settings = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("expected --option value, got '" + a + "'");
            }
            int eq = a.indexOf('=');
            if (eq > 0) {
                settings.put(a.substring(2, eq), a.substring(eq + 1));
            } else if (i + 1 < args.length) {
                settings.put(a.substring(2), args[++i]);
            } else {
                throw new IllegalArgumentException("option " + a + " has no value");
            }
        }
        return settings;
    }

    public static String help() {
        StringBuilder b = new StringBuilder("kv-router job (routing view and per-class ratios). Options (--name value):\n");
        for (var o : KvRouterJobOptions.all()) {
            b.append("  --").append(o.key()).append(o.hasDefaultValue() ? "  (default: " + o.defaultValue() + ")" : "").append('\n')
                    .append("      ").append(Declared.describe(o)).append('\n');
        }
        return b.toString();
    }
}
