package dev.kvrouter.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.schemas.registry.RegistrySettings;
import dev.kvrouter.schemas.registry.SchemaRegistryClient;
import dev.kvrouter.schemas.serde.RegistryAvroDeserializer;
import dev.kvrouter.schemas.serde.RegistryAvroSerializer;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.LocalStackExtension;
import dev.kvrouter.stack.junit.UniqueNames;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Every record type through the real broker and the real registry, with the project's serdes. */
@ExtendWith(LocalStackExtension.class)
class SerdeRoundTripITCase {

    @Test
    void everyRecordTypeRoundTripsThroughKafkaInTheConfluentWireFormat(StackAddresses stack) throws Exception {
        List<SpecificRecord> samples = SampleRecords.all();
        Map<String, SpecificRecord> byTopic = new java.util.LinkedHashMap<>();
        for (SpecificRecord r : samples) {
            byTopic.put(UniqueNames.topic("it-serde-" + r.getSchema().getName()), r);
        }
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", stack.kafkaBootstrap()))) {
            admin.createTopics(byTopic.keySet().stream().map(t -> new NewTopic(t, 1, (short) 1)).toList()).all().get();
        }

        Map<String, Object> producerConfig = Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.kafkaBootstrap(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, RegistryAvroSerializer.class,
                RegistrySettings.URL, stack.schemaRegistryUrl());
        try (KafkaProducer<String, SpecificRecord> producer = new KafkaProducer<>(producerConfig)) {
            for (var e : byTopic.entrySet()) {
                producer.send(new ProducerRecord<>(e.getKey(), "k", e.getValue())).get();
            }
        }

        SchemaRegistryClient registry = new SchemaRegistryClient(RegistrySettings.of(stack.schemaRegistryUrl()));
        for (var e : byTopic.entrySet()) {
            byte[] raw = SerdeRoundTripITCase.<byte[]>consumeOne(stack, e.getKey(), ByteArrayDeserializer.class).value();
            assertThat(raw[0]).as("magic byte").isZero();
            int id = ByteBuffer.wrap(raw, 1, 4).getInt();
            assertThat(SchemaNormalization.parsingFingerprint64(registry.schemaById(id)))
                    .as("the registry knows id %d as %s", id, e.getValue().getSchema().getFullName())
                    .isEqualTo(SchemaNormalization.parsingFingerprint64(e.getValue().getSchema()));
            assertThat(registry.lookup(e.getKey() + "-value", e.getValue().getSchema())).hasValue(id);

            Object decoded = consumeOne(stack, e.getKey(), RegistryAvroDeserializer.class).value();
            assertThat(decoded).isInstanceOf(e.getValue().getClass()).isEqualTo(e.getValue());
        }
    }

    private static <V> ConsumerRecord<String, V> consumeOne(StackAddresses stack, String topic, Class<?> valueDeserializer) {
        Map<String, Object> config = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.kafkaBootstrap(),
                ConsumerConfig.GROUP_ID_CONFIG, UniqueNames.topic("it-group"),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, valueDeserializer,
                RegistrySettings.URL, stack.schemaRegistryUrl());
        try (KafkaConsumer<String, V> consumer = new KafkaConsumer<>(config)) {
            consumer.subscribe(List.of(topic));
            List<ConsumerRecord<String, V>> got = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (got.isEmpty() && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(got::add);
            }
            assertThat(got).as("one record on " + topic).hasSize(1);
            return got.get(0);
        }
    }
}
