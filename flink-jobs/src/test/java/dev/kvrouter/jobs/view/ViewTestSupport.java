package dev.kvrouter.jobs.view;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.balancer.KvRouterClient.Pick;
import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.schemas.registry.RegistrySettings;
import dev.kvrouter.schemas.serde.RegistryAvroDeserializer;
import dev.kvrouter.schemas.serde.RegistryAvroSerializer;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.UniqueNames;
import dev.kvrouter.topics.TopicApplier;
import dev.kvrouter.topics.TopicCatalog;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** What the routing-view ITCases share: private topics, an Avro producer, waiting for a pick. */
public final class ViewTestSupport {

    static final Duration WAIT = Duration.ofSeconds(30);

    private ViewTestSupport() {}

    /** The MiniCluster a job test runs in: one TaskManager with this many slots. */
    public static MiniClusterExtension miniCluster(int slots) {
        return miniCluster(slots, new org.apache.flink.configuration.Configuration());
    }

    /** The same cluster with these settings (a metrics reporter, say). */
    public static MiniClusterExtension miniCluster(int slots, org.apache.flink.configuration.Configuration cluster) {
        return new MiniClusterExtension(new MiniClusterResourceConfiguration.Builder()
                .setNumberTaskManagers(1).setNumberSlotsPerTaskManager(slots).setConfiguration(cluster).build());
    }

    /** Applies the declared topics under a fresh prefix and returns it. */
    public static String topics(StackAddresses stack, String base) throws Exception {
        String prefix = UniqueNames.topic(base) + ".";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", stack.kafkaBootstrap()))) {
            TopicApplier applier = new TopicApplier(admin, Duration.ofSeconds(30));
            assertThat(applier.apply(applier.plan(TopicCatalog.bundled().withPrefix(prefix)))).isEmpty();
        }
        return prefix;
    }

    /**
     * A job configuration against the stack: the given topic prefix, a private group and view key
     * prefix, reading from the start, checkpoints every second, then {@code overrides}
     * (name, value, name, value, ...).
     */
    public static KvRouterJobConfig config(StackAddresses stack, String topics, String redisUrl, String... overrides) {
        Map<String, String> settings = new java.util.LinkedHashMap<>(Map.of(
                "kafka.bootstrap", stack.kafkaBootstrap(),
                "schema-registry.url", stack.schemaRegistryUrl(),
                "redis.url", redisUrl,
                "topics.prefix", topics,
                "kafka.group-id", UniqueNames.topic(topics + "job"),
                "kafka.starting-offsets", "earliest",
                "view.key-prefix", UniqueNames.redisPrefix("it-view"),
                "job.checkpoint-interval", "1 s"));
        for (int i = 0; i < overrides.length; i += 2) {
            settings.put(overrides[i], overrides[i + 1]);
        }
        return KvRouterJobConfig.from(settings);
    }

    public static KafkaProducer<String, Object> producer(StackAddresses stack) {
        // In order, once, also on a topic created a moment before (JobRecoveryITCase once lost its first half so).
        Map<String, Object> config = new java.util.HashMap<>(dev.kvrouter.topics.KafkaClients.orderedDelivery());
        config.putAll(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.kafkaBootstrap(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, RegistryAvroSerializer.class,
                ProducerConfig.LINGER_MS_CONFIG, 0,
                RegistrySettings.URL, stack.schemaRegistryUrl()));
        return new KafkaProducer<>(config);
    }

    /** Picks until the answer satisfies {@code until}, for at most {@link #WAIT}. */
    public static Pick await(Supplier<Pick> pick, Predicate<Pick> until) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        Pick last = pick.get();
        while (!until.test(last)) {
            assertThat(System.nanoTime()).as("waiting %s for a pick to satisfy the condition; last: %s", WAIT, last)
                    .isLessThan(deadline);
            Thread.sleep(100);
            last = pick.get();
        }
        return last;
    }

    /** An Avro consumer of one topic from its start, in a group of its own. */
    public static <V> KafkaConsumer<String, V> consumer(StackAddresses stack, String group, String topic) {
        KafkaConsumer<String, V> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.kafkaBootstrap(),
                ConsumerConfig.GROUP_ID_CONFIG, UniqueNames.topic(group),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, RegistryAvroDeserializer.class,
                RegistrySettings.URL, stack.schemaRegistryUrl()));
        consumer.subscribe(List.of(topic));
        return consumer;
    }

    /** Every block field of the view, by group key: what a balancer can match against. */
    public static Map<String, Map<String, String>> blockFields(RedisCommands<String, String> redis, ViewLayout layout) {
        Map<String, Map<String, String>> view = new TreeMap<>();
        ScanIterator<String> keys = ScanIterator.scan(redis, ScanArgs.Builder.matches(layout.prefix() + "g:*").limit(1_000));
        while (keys.hasNext()) {
            String key = keys.next();
            view.put(key, new TreeMap<>(redis.hgetall(key)));
        }
        return view;
    }

    /**
     * The view's entries with epochs and times left out, {@code group/block/engine}: what a clean run
     * and a run through a fault must agree on.
     */
    public static Set<String> entries(Map<String, Map<String, String>> blockFields) {
        Set<String> entries = new TreeSet<>();
        blockFields.forEach((group, fields) -> fields.forEach((block, holders) -> {
            for (String holder : holders.split(",")) {
                entries.add(group + "/" + block + "/" + holder.substring(0, holder.indexOf('=')));
            }
        }));
        return entries;
    }

    /** The entries a view holds once {@code engine} stored every block of every prompt (16-token blocks). */
    public static Set<String> entriesOf(ViewLayout layout, String engine, List<int[]> prompts, int tagDepth) {
        CanonicalBlockHasher hasher = new CanonicalBlockHasher(16);
        Set<String> entries = new TreeSet<>();
        for (int[] prompt : prompts) {
            long[] chain = hasher.chain(FakeEngine.MODEL, null, prompt, List.of());
            for (int position = 1; position <= chain.length; position++) {
                entries.add(layout.groupKey(ViewLayout.tag(chain, position, tagDepth)) + "/" + ViewLayout.hex(chain[position - 1])
                        + "/" + engine);
            }
        }
        return entries;
    }

    /** Waits, polling every 200 ms, until {@code condition} holds; fails the test after {@code limit}. */
    public static void awaitTrue(java.util.function.BooleanSupplier condition, String what, Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waiting %s for %s", limit, what).isLessThan(deadline);
            Thread.sleep(200);
        }
    }

    /** What Flink's Prometheus reporter puts before an operator's metric names. */
    public static final String OPERATOR_METRIC = "flink_taskmanager_job_task_operator_";

    /** The text a job's Prometheus reporter serves at {@code /metrics} now; empty while nothing answers (the cluster is starting). */
    public static java.util.Optional<String> scrapeMetrics(int port) {
        try {
            java.net.http.HttpResponse<String> response = java.net.http.HttpClient.newHttpClient().send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + port + "/metrics"))
                            .timeout(Duration.ofSeconds(5)).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 ? java.util.Optional.of(response.body()) : java.util.Optional.empty();
        } catch (java.io.IOException e) {
            return java.util.Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return java.util.Optional.empty();
        }
    }

    /** The sum over every series of {@code name} whose labels contain {@code label}; empty when there is none. */
    public static java.util.Optional<Double> metricSum(String metrics, String name, String label) {
        return metricValues(metrics, name, label).stream().reduce(Double::sum);
    }

    /** Each series of {@code name} whose labels contain {@code label} (one per subtask, say). */
    public static List<Double> metricValues(String metrics, String name, String label) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^" + java.util.regex.Pattern.quote(name) + "(\\{[^}]*\\})? (\\S+)$")
                .matcher(metrics);
        List<Double> found = new java.util.ArrayList<>();
        while (m.find()) {
            if ((m.group(1) == null ? "" : m.group(1)).contains(label)) {
                found.add(Double.parseDouble(m.group(2)));
            }
        }
        return found;
    }

    /** A live engine's load report every half second, from the test's start to its end. */
    static final class Heartbeats implements AutoCloseable {
        private final java.util.concurrent.ScheduledExecutorService timer =
                java.util.concurrent.Executors.newSingleThreadScheduledExecutor();

        Heartbeats(KafkaProducer<String, Object> producer, KvRouterJobConfig config, FakeEngine engine) {
            timer.scheduleAtFixedRate(() -> producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(
                    config.kafka().topic(dev.kvrouter.common.TopicNames.ENGINE_LOAD), engine.id, engine.load(0, 1))),
                    0, 500, java.util.concurrent.TimeUnit.MILLISECONDS);
        }

        @Override
        public void close() throws InterruptedException {
            timer.shutdownNow();
            timer.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /** {@code count} random prompts of {@code blocks} 16-token blocks. */
    public static List<int[]> prompts(long seed, int count, int blocks) {
        java.util.Random random = new java.util.Random(seed);
        List<int[]> prompts = new java.util.ArrayList<>();
        for (int i = 0; i < count; i++) {
            prompts.add(random.ints(blocks * 16, 0, 50_000).toArray());
        }
        return prompts;
    }

    /** The engine's health changes as the engine-state topic has them, read to its end. */
    public static List<dev.kvrouter.events.EngineHealth> healthChanges(StackAddresses stack, KvRouterJobConfig config, String engine) {
        List<dev.kvrouter.events.EngineHealth> health = new java.util.ArrayList<>();
        try (KafkaConsumer<String, dev.kvrouter.events.EngineStateChange> consumer = consumer(stack, "it-health", config.kafka().topic(dev.kvrouter.common.TopicNames.ENGINE_STATE))) {
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(r -> {
                    if (r.value().getEngine().toString().startsWith(engine)) {
                        health.add(r.value().getHealth());
                    }
                });
            }
        }
        return health;
    }
}
