package dev.kvrouter.bridge;

import dev.kvrouter.common.Durations;
import dev.kvrouter.common.TopicNames;
import dev.kvrouter.common.config.ClientConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The bridge's settings: immutable, typed, validated once. {@link #from} reports every problem
 * (missing, malformed, out of range, unknown names) in one exception. The engines themselves live in
 * {@link #enginesFile()} ({@link EngineFleet}), which is re-read while the bridge runs.
 *
 * @param producerOverrides extra Kafka producer properties ({@code producer.<name>}); idempotence,
 *                          acks and the serializers are the bridge's own and cannot be overridden
 * @param client            the client config (security for Kafka and the registry; README "Security")
 */
public record BridgeConfig(String kafkaBootstrap, String schemaRegistryUrl, String topicPrefix, Path enginesFile,
                           Duration reloadInterval, Duration scrapeInterval, Duration scrapeTimeout, int receiveHighWaterMark,
                           long maxMessageBytes, Duration resubscribeAfter, Duration replayTimeout, int replayMaxBatches, int queueCapacity,
                           long queueMaxBytes, long queueEngineMaxBytes, Duration reportInterval, String prometheusListen, Map<String, String> producerOverrides,
                           ClientConfig client) {

    /** A setting: its name, default (null: required) and meaning. */
    public record Option(String name, String defaultValue, String description) {}

    public static final Option KAFKA_BOOTSTRAP = new Option("kafka.bootstrap", null, "Kafka bootstrap servers, host:port[,host:port]. Required.");
    public static final Option SCHEMA_REGISTRY_URL = new Option("schema-registry.url", null, "Confluent-compatible schema registry base URL. Required.");
    public static final Option TOPIC_PREFIX = new Option("topics.prefix", "", "Prefix of every topic name (as given to 'kvr topics apply --prefix').");
    public static final Option ENGINES_FILE = new Option("engines.file", null, "The engines file (YAML, see bridge/README.md). Required.");
    public static final Option RELOAD_INTERVAL = new Option("engines.reload-interval", "2 s",
            "How often the engines file is checked for changes; engines added, removed or changed are (re)subscribed, the others untouched.");
    public static final Option SCRAPE_INTERVAL = new Option("metrics.scrape-interval", "1 s",
            "How often each engine's metrics are scraped into an EngineLoad (the heartbeat; keep it well under the job's engine.suspect-after).");
    public static final Option SCRAPE_TIMEOUT = new Option("metrics.scrape-timeout", "2 s", "Time limit of one metrics scrape.");
    public static final Option RECEIVE_HWM = new Option("zmq.receive-hwm", "10000",
            "Batches ZMQ buffers per publisher before it drops (ZMQ_RCVHWM); drops show up as sequence gaps.");
    public static final Option MAX_MESSAGE_BYTES = new Option("zmq.max-message-bytes", "16777216",
            "Largest message accepted from a publisher (ZMQ_MAXMSGSIZE); a bigger one drops the connection.");
    public static final Option RESUBSCRIBE_AFTER = new Option("zmq.resubscribe-after", "30 s",
            "A publisher that has sent nothing since its sockets were made gets new ones after this long (guards against "
                    + "connections that stall before their handshake; an idle engine costs one reconnect per interval).");
    public static final Option REPLAY_TIMEOUT = new Option("replay.timeout", "2 s",
            "How long a replay request may take before the rest of the gap is forwarded as lost.");
    public static final Option REPLAY_MAX_BATCHES = new Option("replay.max-batches", "10000",
            "A gap larger than this is not replayed (the engine's buffer is smaller anyway) but forwarded as lost.");
    public static final Option QUEUE_CAPACITY = new Option("queue.capacity", "10000",
            "Records waiting for the Kafka producer; when full, new batches are dropped and counted (the job sees the gap).");
    public static final Option QUEUE_MAX_BYTES = new Option("queue.max-bytes", "268435456",
            "Serialized bytes waiting for the Kafka producer, all engines together (256 MiB; at least a largest batch, 4 MiB); "
                    + "when full, new batches are dropped and counted. Keep it well under the bridge's heap.");
    public static final Option QUEUE_ENGINE_MAX_BYTES = new Option("queue.engine-max-bytes", "67108864",
            "Serialized bytes of one engine's batches waiting for the Kafka producer (64 MiB): an engine flooding its "
                    + "events is dropped at this share while the others' batches still go in.");
    public static final Option REPORT_INTERVAL = new Option("report.interval", "10 s", "How often the bridge logs its metrics.");
    public static final Option PROMETHEUS_LISTEN = new Option("prometheus.listen", "",
            "host:port where the bridge serves its own metrics per engine for Prometheus at /metrics, e.g. 0.0.0.0:9250 "
                    + "(every interface) or 127.0.0.1:9250; empty (default): no endpoint.");
    public static final Option CLIENT_CONFIG = new Option("client-config", "",
            "Client properties file for secured Kafka and registry (SASL/TLS settings, secrets as ${env:NAME} or ${file:PATH}); "
                    + "default: $" + ClientConfig.VARIABLE + "; empty: plaintext without credentials.");
    static final String PRODUCER_PREFIX = "producer.";

    public static final List<Option> OPTIONS = List.of(KAFKA_BOOTSTRAP, SCHEMA_REGISTRY_URL, TOPIC_PREFIX, ENGINES_FILE,
            RELOAD_INTERVAL, SCRAPE_INTERVAL, SCRAPE_TIMEOUT, RECEIVE_HWM, MAX_MESSAGE_BYTES, RESUBSCRIBE_AFTER, REPLAY_TIMEOUT,
            REPLAY_MAX_BATCHES, QUEUE_CAPACITY, QUEUE_MAX_BYTES, QUEUE_ENGINE_MAX_BYTES, REPORT_INTERVAL, PROMETHEUS_LISTEN, CLIENT_CONFIG);

    /** Producer properties that are the bridge's contract, not a tuning knob. */
    private static final Set<String> FIXED_PRODUCER = Set.of("enable.idempotence", "acks", "key.serializer", "value.serializer",
            "bootstrap.servers", "schema.registry.url");

    public BridgeConfig {
        producerOverrides = Map.copyOf(producerOverrides);
        client = client == null ? ClientConfig.none() : client;
    }

    /** Without a secret: producer overrides and the client config print redacted. */
    @Override
    public String toString() {
        return "BridgeConfig[kafkaBootstrap=" + kafkaBootstrap + ", schemaRegistryUrl=" + schemaRegistryUrl + ", topicPrefix=" + topicPrefix
                + ", enginesFile=" + enginesFile + ", producerOverrides=" + ClientConfig.redact(producerOverrides) + ", client=" + client + "]";
    }

    /** A topic of the catalogue ({@link TopicNames}) under the configured prefix. */
    public String topic(String name) {
        return topicPrefix + name;
    }

    /** Reads and checks every setting; unknown names are errors (a typo must not silently keep a default). */
    public static BridgeConfig from(Map<String, String> settings) {
        List<String> problems = new ArrayList<>();
        Map<String, String> producer = new TreeMap<>();
        Set<String> known = new java.util.HashSet<>();
        OPTIONS.forEach(o -> known.add(o.name()));
        settings.forEach((k, v) -> {
            if (k.startsWith(PRODUCER_PREFIX)) {
                String name = k.substring(PRODUCER_PREFIX.length());
                if (FIXED_PRODUCER.contains(name)) {
                    problems.add(k + " cannot be set: the bridge's producer is idempotent with acks=all and its own serializers");
                } else {
                    producer.put(name, v);
                }
            } else if (!known.contains(k)) {
                problems.add("unknown setting '" + k + "' (see 'kvr bridge --help')");
            }
        });
        Reader r = new Reader(settings, problems);
        String bootstrap = r.text(KAFKA_BOOTSTRAP);
        String registry = r.text(SCHEMA_REGISTRY_URL);
        String prefix = r.text(TOPIC_PREFIX);
        String file = r.text(ENGINES_FILE);
        long queueMaxBytes = r.number(QUEUE_MAX_BYTES, KafkaOutbox.KV_EVENTS_MAX_BYTES, Long.MAX_VALUE / 2);
        long queueEngineMaxBytes = r.number(QUEUE_ENGINE_MAX_BYTES, KafkaOutbox.KV_EVENTS_MAX_BYTES, Long.MAX_VALUE / 2);
        if (queueEngineMaxBytes > queueMaxBytes) {
            problems.add(QUEUE_ENGINE_MAX_BYTES.name() + " (" + queueEngineMaxBytes + ") must not exceed " + QUEUE_MAX_BYTES.name() + " ("
                    + queueMaxBytes + ")");
        }
        BridgeConfig config = new BridgeConfig(bootstrap, registry, prefix, file == null ? null : Path.of(file),
                r.duration(RELOAD_INTERVAL, Duration.ofMillis(10)), r.duration(SCRAPE_INTERVAL, Duration.ofMillis(10)),
                r.duration(SCRAPE_TIMEOUT, Duration.ofMillis(10)), (int) r.number(RECEIVE_HWM, 1, 10_000_000),
                r.number(MAX_MESSAGE_BYTES, 1024, Integer.MAX_VALUE), r.duration(RESUBSCRIBE_AFTER, Duration.ofMillis(100)),
                r.duration(REPLAY_TIMEOUT, Duration.ofMillis(10)),
                (int) r.number(REPLAY_MAX_BATCHES, 0, 10_000_000), (int) r.number(QUEUE_CAPACITY, 1, 10_000_000),
                queueMaxBytes, queueEngineMaxBytes,
                r.duration(REPORT_INTERVAL, Duration.ofMillis(100)), r.listen(PROMETHEUS_LISTEN), producer, clientConfig(r.text(CLIENT_CONFIG), problems));
        if (!problems.isEmpty()) {
            throw new InvalidBridgeConfigException(problems);
        }
        return config;
    }

    private static ClientConfig clientConfig(String file, List<String> problems) {
        if (file == null || file.isBlank()) {
            return ClientConfig.none();
        }
        try {
            return ClientConfig.load(Path.of(file));
        } catch (IllegalArgumentException e) {
            problems.add(CLIENT_CONFIG.name() + ": " + e.getMessage());
            return ClientConfig.none();
        }
    }

    /** Every setting with its default and meaning, for --help. */
    public static String help() {
        StringBuilder out = new StringBuilder("Settings (-D name=value):\n");
        for (Option o : OPTIONS) {
            out.append(String.format(Locale.ROOT, "  %-26s %s%n      %s%n", o.name(),
                    o.defaultValue() == null ? "(required)" : "default '" + o.defaultValue() + "'", o.description()));
        }
        out.append("  producer.<name>            any Kafka producer property (e.g. producer.linger.ms, producer.compression.type)\n");
        return out.toString();
    }

    /** Reads settings, collecting problems instead of failing on the first. */
    private record Reader(Map<String, String> settings, List<String> problems) {


        /** Empty, or host:port with a port from 1 to 65535. */
        String listen(Option o) {
            String v = settings.getOrDefault(o.name(), o.defaultValue()).trim();
            int colon = v.lastIndexOf(':');
            if (!v.isEmpty()) {
                boolean valid = colon > 0;
                if (valid) {
                    try {
                        int port = Integer.parseInt(v.substring(colon + 1));
                        valid = port >= 1 && port <= 65535;
                    } catch (NumberFormatException e) {
                        valid = false;
                    }
                }
                if (!valid) {
                    problems.add(o.name() + " '" + v + "' is not host:port (a port from 1 to 65535), e.g. 0.0.0.0:9250");
                }
            }
            return v;
        }

        String raw(Option o) {
            String v = settings.getOrDefault(o.name(), o.defaultValue());
            if (v == null || (o.defaultValue() == null && v.isBlank())) {
                problems.add(o.name() + " is required: " + o.description());
                return null;
            }
            return v.trim();
        }

        String text(Option o) {
            return raw(o);
        }

        long number(Option o, long min, long max) {
            String v = raw(o);
            try {
                long n = Long.parseLong(v);
                if (n < min || n > max) {
                    problems.add(o.name() + " " + n + " is outside " + min + ".." + max);
                }
                return n;
            } catch (NumberFormatException e) {
                problems.add(o.name() + " must be a whole number, was '" + v + "'");
                return min;
            }
        }

        Duration duration(Option o, Duration min) {
            String v = raw(o);
            Duration d;
            try {
                d = Durations.parse(v);
            } catch (IllegalArgumentException e) {
                problems.add(o.name() + " must be a duration, " + Durations.FORMAT + "; was '" + v + "'");
                return min;
            }
            if (d.compareTo(min) < 0) {
                problems.add(o.name() + " " + v + " is shorter than " + min.toMillis() + " ms");
            }
            return d;
        }
    }
}
