package dev.kvrouter.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.common.TopicNames;
import dev.kvrouter.common.config.ClientConfig;
import dev.kvrouter.dlq.DeadLetter;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RoutingDecision;
import dev.kvrouter.schemas.registry.RegistrySettings;
import dev.kvrouter.schemas.serde.RegistryAvroDeserializer;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.LocalStackExtension;
import dev.kvrouter.stack.junit.UniqueNames;
import dev.kvrouter.topics.TopicApplier;
import dev.kvrouter.topics.TopicCatalog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The access log to the real Kafka and registry: every line once, across restarts and a rotation; bad lines dead-lettered. */
@ExtendWith(LocalStackExtension.class)
class AccessLogShipperITCase {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;
    private StackAddresses stack;
    private String prefix;

    @BeforeEach
    void setUp(StackAddresses stack) {
        this.stack = stack;
        prefix = UniqueNames.topic("it-gateway") + ".";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", stack.kafkaBootstrap()))) {
            TopicApplier applier = new TopicApplier(admin, Duration.ofSeconds(30));
            assertThat(applier.apply(applier.plan(TopicCatalog.bundled().withPrefix(prefix)))).isEmpty();
        }
    }

    private AccessLogShipper shipper(Path log) {
        return new AccessLogShipper(log, dir.resolve("position"), stack.kafkaBootstrap(), stack.schemaRegistryUrl(), prefix, "m",
                ClientConfig.none(), 64 * 1024);
    }

    private static String line(String id, boolean usage) {
        return "{\"request_id\":\"" + id + "\",\"end_s\":\"1700000000.500\",\"client\":\"c\",\"class\":\"\",\"engine\":\"e1\",\"route\":\"view\","
                + "\"reason\":\"AFFINITY\",\"predicted_blocks\":\"1\",\"best_holder_blocks\":\"1\",\"saved_prefill_ms\":\"1.0\","
                + "\"added_wait_ms\":\"0.0\",\"status\":\"200\",\"ttft_ms\":\"5.0\",\"prompt_tokens\":\"" + (usage ? "32" : "")
                + "\",\"cached_tokens\":\"16\",\"output_tokens\":\"3\",\"request_s\":\"0.010\",\"blocks\":\"00000000000000ff\"}\n";
    }

    private static void append(Path log, String text) throws Exception {
        Files.writeString(log, text, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    @Test
    void everyLineIsShippedOnceAcrossRestartsAndARotationAndABadLineIsDeadLettered() throws Exception {
        Path log = dir.resolve("kvr-access.log");
        append(log, line("r1", true) + "not json at all\n" + line("r2", false) + line("r3", true).substring(0, 40));
        try (AccessLogShipper shipper = shipper(log)) {
            assertThat(shipper.shipAvailable()).as("two lines and the bad one; r3 is still being written").isEqualTo(3);
            assertThat(shipper.shipAvailable()).isZero();
        }
        append(log, line("r3", true).substring(40));
        // logrotate: the log renamed, nginx reopens a new file; more lines in both before the shipper runs again.
        append(log, line("r4", true));
        Files.move(log, dir.resolve("kvr-access.log.1"));
        append(log, line("r5", true));
        try (AccessLogShipper restarted = shipper(log)) {
            assertThat(restarted.shipAvailable()).as("the rest of the rotated file, then the new one").isEqualTo(3);
            assertThat(restarted.shipAvailable()).isZero();
        }
        List<RoutingDecision> decisions = consume(TopicNames.ROUTING_DECISIONS, 5, RoutingDecision.class);
        assertThat(decisions).extracting(d -> d.getRequestId().toString()).containsExactlyInAnyOrder("r1", "r2", "r3", "r4", "r5");
        List<RequestOutcome> outcomes = consume(TopicNames.REQUEST_OUTCOMES, 4, RequestOutcome.class);
        assertThat(outcomes).extracting(o -> o.getRequestId().toString()).as("r2's engine reported no usage")
                .containsExactlyInAnyOrder("r1", "r3", "r4", "r5");
        assertThat(outcomes).allSatisfy(o -> assertThat(o.getCachedTokens()).isEqualTo(16));
        List<DeadLetter> dead = consume(TopicNames.DEAD_LETTER, 1, DeadLetter.class);
        assertThat(dead.get(0).getReason().toString()).contains("not JSON");
        assertThat(dead.get(0).getStage().toString()).isEqualTo(AccessLogShipper.DEAD_LETTER_STAGE);
    }

    /** Every record of the topic from the start, waiting until there are {@code count}; then a second more for any extra. */
    private <T> List<T> consume(String topic, int count, Class<T> type) throws InterruptedException {
        try (KafkaConsumer<String, Object> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.kafkaBootstrap(),
                ConsumerConfig.GROUP_ID_CONFIG, UniqueNames.topic("it-gateway-reader"),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, RegistryAvroDeserializer.class,
                RegistrySettings.URL, stack.schemaRegistryUrl()))) {
            consumer.subscribe(List.of(prefix + topic));
            List<ConsumerRecord<String, Object>> records = new ArrayList<>();
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (records.size() < count) {
                assertThat(System.nanoTime()).as("waiting for %d records on %s; got %d", count, topic, records.size()).isLessThan(deadline);
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
            consumer.poll(Duration.ofSeconds(1)).forEach(records::add); // (a duplicate would show here)
            return records.stream().map(r -> type.cast(r.value())).toList();
        }
    }
}
