package dev.kvrouter.jobs.view;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.balancer.KvRouterClient.Pick;
import dev.kvrouter.schemas.registry.RegistrySettings;
import dev.kvrouter.schemas.serde.RegistryAvroSerializer;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.UniqueNames;
import dev.kvrouter.topics.TopicApplier;
import dev.kvrouter.topics.TopicCatalog;
import java.time.Duration;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringSerializer;

/** What the routing-view ITCases share: private topics, an Avro producer, waiting for a pick. */
public final class ViewTestSupport {

    static final Duration WAIT = Duration.ofSeconds(30);

    private ViewTestSupport() {}

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
    public static RoutingViewConfig config(StackAddresses stack, String topics, String redisUrl, String... overrides) {
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
        return RoutingViewConfig.from(settings);
    }

    public static KafkaProducer<String, Object> producer(StackAddresses stack) {
        return new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.kafkaBootstrap(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, RegistryAvroSerializer.class,
                ProducerConfig.LINGER_MS_CONFIG, 0,
                RegistrySettings.URL, stack.schemaRegistryUrl()));
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
}
