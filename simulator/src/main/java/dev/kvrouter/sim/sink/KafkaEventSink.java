package dev.kvrouter.sim.sink;

import dev.kvrouter.common.TopicNames;
import dev.kvrouter.common.config.ClientConfig;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RoutingDecision;
import dev.kvrouter.schemas.registry.RegistrySettings;
import dev.kvrouter.schemas.serde.RegistryAvroSerializer;
import dev.kvrouter.topics.KafkaClients;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The fleet's records to the project's topics, as real engines and balancers would send them:
 * Confluent-format Avro through {@link RegistryAvroSerializer}; KV batches and load reports keyed
 * by engine id (each engine's batches stay in order on one partition), outcomes and decisions by
 * request id. A failed send fails the next call, not silently.
 */
public final class KafkaEventSink implements EventSink {

    /** The four topics this sink writes, under a prefix ({@code kvr-topics.yaml} names). */
    public record Topics(String kvEvents, String engineLoad, String outcomes, String decisions) {
        public static Topics withPrefix(String prefix) {
            return new Topics(prefix + TopicNames.KV_EVENTS, prefix + TopicNames.ENGINE_LOAD, prefix + TopicNames.REQUEST_OUTCOMES,
                    prefix + TopicNames.ROUTING_DECISIONS);
        }
    }

    private final KafkaProducer<String, Object> producer;
    private final Topics topics;
    private final AtomicReference<Exception> failure = new AtomicReference<>();

    public KafkaEventSink(String bootstrap, String registryUrl, Topics topics) {
        this(bootstrap, registryUrl, topics, ClientConfig.none());
    }

    /** With the client config's security settings for Kafka and the registry. */
    public KafkaEventSink(String bootstrap, String registryUrl, Topics topics, ClientConfig client) {
        Map<String, Object> config = KafkaClients.serdeConfig(client, Map.of());
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, RegistryAvroSerializer.class);
        config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        config.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd");
        // A batch of stored blocks carries their token ids; the topic allows 4 MiB.
        config.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 4 * 1024 * 1024);
        // The demo creates its topics a moment before the fleet starts: see orderedDelivery.
        config.putAll(KafkaClients.orderedDelivery());
        config.put(RegistrySettings.URL, registryUrl);
        this.producer = new KafkaProducer<>(config);
        this.topics = topics;
    }

    public Topics topics() {
        return topics;
    }

    @Override
    public void kvEvents(KvEventBatch batch) {
        send(topics.kvEvents(), batch.getEngineId(), batch);
    }

    @Override
    public void load(EngineLoad load) {
        send(topics.engineLoad(), load.getEngineId(), load);
    }

    @Override
    public void outcome(RequestOutcome outcome) {
        send(topics.outcomes(), outcome.getRequestId(), outcome);
    }

    @Override
    public void decision(RoutingDecision decision) {
        send(topics.decisions(), decision.getRequestId(), decision);
    }

    private void send(String topic, String key, Object value) {
        throwIfFailed();
        producer.send(new ProducerRecord<>(topic, key, value), (meta, e) -> {
            if (e != null) {
                failure.compareAndSet(null, e);
            }
        });
    }

    private void throwIfFailed() {
        Exception e = failure.get();
        if (e != null) {
            throw new IllegalStateException("a send to Kafka failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void flush() {
        producer.flush();
        throwIfFailed();
    }

    @Override
    public void close() {
        try {
            flush();
        } finally {
            producer.close();
        }
    }
}
