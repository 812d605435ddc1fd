package dev.kvrouter.sim.sink;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.events.AllBlocksCleared;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RoutingDecision;
import dev.kvrouter.schemas.registry.RegistrySettings;
import dev.kvrouter.schemas.serde.RegistryAvroDeserializer;
import dev.kvrouter.sim.SimRunner;
import dev.kvrouter.sim.engine.EngineConfig;
import dev.kvrouter.sim.engine.Failure;
import dev.kvrouter.sim.policy.Policies;
import dev.kvrouter.sim.workload.SyntheticWorkload;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.LocalStackExtension;
import dev.kvrouter.stack.junit.UniqueNames;
import dev.kvrouter.topics.TopicApplier;
import dev.kvrouter.topics.TopicCatalog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A short simulation with the Kafka sink against the real stack: what the topics hold, read back
 * with the project's deserializer, is exactly what the fleet emitted — per engine, in order, with
 * the lost batches' gap and the restart's sequence reset.
 */
@ExtendWith(LocalStackExtension.class)
class KafkaEventSinkITCase {

    /** Sends to Kafka and keeps a copy of everything sent. */
    private static final class Tee implements EventSink {
        final InMemorySink copy = new InMemorySink();
        final EventSink kafka;

        Tee(EventSink kafka) {
            this.kafka = kafka;
        }

        @Override
        public void kvEvents(KvEventBatch b) {
            copy.kvEvents(b);
            kafka.kvEvents(b);
        }

        @Override
        public void load(EngineLoad l) {
            copy.load(l);
            kafka.load(l);
        }

        @Override
        public void outcome(RequestOutcome o) {
            copy.outcome(o);
            kafka.outcome(o);
        }

        @Override
        public void decision(RoutingDecision d) {
            copy.decision(d);
            kafka.decision(d);
        }

        @Override
        public void flush() {
            kafka.flush();
        }
    }

    @Test
    void theTopicsHoldExactlyWhatTheSimulatedFleetEmitted(StackAddresses stack) throws Exception {
        String prefix = UniqueNames.topic("it-sim") + ".";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", stack.kafkaBootstrap()))) {
            TopicApplier applier = new TopicApplier(admin, Duration.ofSeconds(30));
            assertThat(applier.apply(applier.plan(TopicCatalog.bundled().withPrefix(prefix)))).isEmpty();
        }
        KafkaEventSink.Topics topics = KafkaEventSink.Topics.withPrefix(prefix);

        Tee tee;
        SimRunner.Result result;
        try (KafkaEventSink kafka = new KafkaEventSink(stack.kafkaBootstrap(), stack.schemaRegistryUrl(), topics)) {
            tee = new Tee(kafka);
            CountingSink counting = new CountingSink(tee);
            SimRunner runner = new SimRunner(SimRunner.Settings.defaults(3, EngineConfig.defaults().withCapacity(2_048))
                    .withFailures(List.of(Failure.parse("gap:0@5/2"), Failure.parse("restart:1@15/1")))
                    .withRunId(UniqueNames.topic("run")), null);
            result = runner.run(new SyntheticWorkload("mixed", SyntheticWorkload.Settings.defaults(30, 11)),
                    List.of(new SimRunner.FleetSpec(Policies.factory("least-loaded", Policies.Settings.defaults()), counting)));
            assertThat(counting.decisions()).isEqualTo(result.requests());
            assertThat(counting.outcomes()).isEqualTo(result.requests());
            kafka.flush();
        }
        InMemorySink sent = tee.copy;
        assertThat(sent.kvEvents).hasSizeGreaterThan(10);

        List<KvEventBatch> batches = consume(stack, topics.kvEvents(), sent.kvEvents.size());
        List<EngineLoad> loads = consume(stack, topics.engineLoad(), sent.loads.size());
        List<RequestOutcome> outcomes = consume(stack, topics.outcomes(), sent.outcomes.size());
        List<RoutingDecision> decisions = consume(stack, topics.decisions(), sent.decisions.size());

        // Per engine, the batches arrive in the order sent (keyed by engine id), equal to what was sent.
        assertThat(byEngine(batches)).isEqualTo(byEngine(sent.kvEvents));
        assertThat(loads).hasSameSizeAs(sent.loads);
        assertThat(outcomes).containsExactlyInAnyOrderElementsOf(sent.outcomes);
        assertThat(decisions).containsExactlyInAnyOrderElementsOf(sent.decisions);
        assertThat(decisions).hasSize((int) result.requests());

        Map<String, List<Long>> seqs = new TreeMap<>();
        byEngine(batches).forEach((engine, list) -> seqs.put(engine, list.stream().map(KvEventBatch::getSeq).toList()));
        // Engine 0 lost two batches after 5 s: one gap of exactly 2 in an otherwise +1 sequence.
        List<Long> e0 = seqs.get("sim-engine-0");
        int gaps = 0;
        for (int i = 1; i < e0.size(); i++) {
            long step = e0.get(i) - e0.get(i - 1);
            assertThat(step).isIn(1L, 3L);
            gaps += step == 3 ? 1 : 0;
        }
        assertThat(gaps).isEqualTo(1);
        // Engine 1 restarted at 15 s: its sequence starts again at 0 with AllBlocksCleared.
        List<KvEventBatch> e1 = byEngine(batches).get("sim-engine-1");
        int reset = -1;
        for (int i = 1; i < e1.size(); i++) {
            if (e1.get(i).getSeq() == 0) {
                reset = i;
            } else {
                assertThat(e1.get(i).getSeq()).isEqualTo(e1.get(i - 1).getSeq() + 1);
            }
        }
        assertThat(reset).isPositive();
        assertThat(e1.get(reset).getEvents()).singleElement().isInstanceOf(AllBlocksCleared.class);
        assertThat(outcomes.stream().filter(o -> o.getStatus() == dev.kvrouter.events.OutcomeStatus.ERROR)).isNotEmpty();
    }

    private static Map<String, List<KvEventBatch>> byEngine(List<KvEventBatch> batches) {
        return batches.stream().collect(Collectors.groupingBy(b -> b.getEngineId().toString(), TreeMap::new, Collectors.toList()));
    }

    /** Reads a topic from the start until {@code expected} records came, for at most 60 s. */
    @SuppressWarnings("unchecked")
    private static <V> List<V> consume(StackAddresses stack, String topic, int expected) {
        Map<String, Object> config = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.kafkaBootstrap(),
                ConsumerConfig.GROUP_ID_CONFIG, UniqueNames.topic("it-sim-group"),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, RegistryAvroDeserializer.class,
                RegistrySettings.URL, stack.schemaRegistryUrl());
        List<V> got = new ArrayList<>();
        try (KafkaConsumer<String, Object> consumer = new KafkaConsumer<>(config)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (got.size() < expected && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, Object> r : consumer.poll(Duration.ofMillis(200))) {
                    got.add((V) r.value());
                }
            }
            // A little longer, to see that nothing beyond what was sent arrives.
            for (ConsumerRecord<String, Object> r : consumer.poll(Duration.ofMillis(500))) {
                got.add((V) r.value());
            }
        }
        assertThat(got).as("records on " + topic).hasSize(expected);
        return got;
    }
}
