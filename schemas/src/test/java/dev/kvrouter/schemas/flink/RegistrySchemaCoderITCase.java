package dev.kvrouter.schemas.flink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.schemas.registry.RegistrySettings;
import dev.kvrouter.schemas.serde.RegistryAvroDeserializer;
import dev.kvrouter.schemas.serde.RegistryAvroSerializer;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.LocalStackExtension;
import dev.kvrouter.stack.junit.UniqueNames;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.apache.avro.specific.SpecificRecord;
import org.apache.flink.formats.avro.RegistryAvroDeserializationSchema;
import org.apache.flink.formats.avro.RegistryAvroSerializationSchema;
import org.apache.flink.util.InstantiationUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** flink-avro's Registry schemas with our coder write and read the same bytes as the Kafka serdes. */
@ExtendWith(LocalStackExtension.class)
class RegistrySchemaCoderITCase {

    @Test
    void flinkAndKafkaSerdesReadEachOthersBytes(StackAddresses stack) throws Exception {
        Map<String, String> registry = Map.of(RegistrySettings.URL, stack.schemaRegistryUrl());
        String topic = UniqueNames.topic("it-coder");
        KvEventBatch batch = dev.kvrouter.schemas.SampleRecords.kvEventBatch();

        // The provider travels with the job graph: it must survive Java serialization.
        RegistrySchemaCoderProvider writeProvider = InstantiationUtil.clone(RegistrySchemaCoderProvider.forTopicValue(registry, topic));
        RegistryAvroSerializationSchema<KvEventBatch> flinkWriter =
                RegistryAvroSerializationSchema.forSpecific(KvEventBatch.class, writeProvider);
        byte[] fromFlink = flinkWriter.serialize(batch);
        assertThat(fromFlink[0]).isZero();

        try (RegistryAvroDeserializer<KvEventBatch> kafkaReader = new RegistryAvroDeserializer<>();
             RegistryAvroSerializer<KvEventBatch> kafkaWriter = new RegistryAvroSerializer<>()) {
            kafkaReader.configure(registry, false);
            kafkaWriter.configure(registry, false);
            assertThat(kafkaReader.deserialize(topic, fromFlink)).isEqualTo(batch);

            byte[] fromKafka = kafkaWriter.serialize(topic, batch);
            assertThat(fromKafka).isEqualTo(fromFlink);
            RegistryAvroDeserializationSchema<KvEventBatch> flinkReader = new RegistryAvroDeserializationSchema<>(
                    KvEventBatch.class, null, InstantiationUtil.clone(RegistrySchemaCoderProvider.forReading(registry)));
            assertThat(flinkReader.deserialize(fromKafka)).isEqualTo(batch);
            assertThatThrownBy(() -> flinkReader.deserialize(new byte[] {1, 2, 3}))
                    .isInstanceOf(IOException.class).hasMessageContaining("expected the magic byte 0x00");
        }
    }

    @Test
    void theValueSchemaWritesFlinksAndTheSerdesBytesForEveryRecordAndEveryNextOne(StackAddresses stack) throws Exception {
        Map<String, String> registry = Map.of(RegistrySettings.URL, stack.schemaRegistryUrl());
        try (RegistryAvroSerializer<SpecificRecord> kafkaWriter = new RegistryAvroSerializer<>()) {
            kafkaWriter.configure(registry, false);
            dev.kvrouter.view.ViewChange unknowns = dev.kvrouter.schemas.SampleRecords.viewChange();
            unknowns.setMedium(null); // the unions' null branch
            unknowns.setCause(null);
            List<SpecificRecord> records = new java.util.ArrayList<>(dev.kvrouter.schemas.SampleRecords.all());
            records.add(unknowns);
            for (SpecificRecord record : records) {
                String topic = UniqueNames.topic("it-value-schema");
                serializeTwiceAndCompare(record, topic, registry, kafkaWriter);
            }

            // A record that cannot be written leaves nothing behind for the next one.
            String topic = UniqueNames.topic("it-value-schema");
            RegistryAvroValueSchema<dev.kvrouter.view.ViewChange> ours = new RegistryAvroValueSchema<>(dev.kvrouter.view.ViewChange.class,
                    RegistrySchemaCoderProvider.forTopicValue(registry, topic));
            dev.kvrouter.view.ViewChange broken = dev.kvrouter.schemas.SampleRecords.viewChange();
            broken.setOp(null); // a required field
            assertThatThrownBy(() -> ours.serialize(broken)).isInstanceOf(RuntimeException.class);
            dev.kvrouter.view.ViewChange good = dev.kvrouter.schemas.SampleRecords.viewChange();
            assertThat(ours.serialize(good)).isEqualTo(kafkaWriter.serialize(topic, good));
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void serializeTwiceAndCompare(SpecificRecord record, String topic, Map<String, String> registry,
                                                 RegistryAvroSerializer<SpecificRecord> kafkaWriter) throws Exception {
        Class type = record.getClass();
        RegistryAvroValueSchema ours = InstantiationUtil.clone(
                new RegistryAvroValueSchema<>(type, RegistrySchemaCoderProvider.forTopicValue(registry, topic)));
        RegistryAvroSerializationSchema flinks = RegistryAvroSerializationSchema.forSpecific(type,
                RegistrySchemaCoderProvider.forTopicValue(registry, topic));
        byte[] first = ours.serialize(record);
        assertThat(first).as(type.getSimpleName()).isEqualTo(flinks.serialize(record)).isEqualTo(kafkaWriter.serialize(topic, record));
        assertThat(ours.serialize(record)).as("%s again: buffers reused, the header kept", type.getSimpleName()).isEqualTo(first);
    }

    @Test
    void aReadOnlyCoderRefusesToWrite(StackAddresses stack) {
        var coder = RegistrySchemaCoderProvider.forReading(Map.of(RegistrySettings.URL, stack.schemaRegistryUrl())).get();
        assertThatThrownBy(() -> coder.writeSchema(KvEventBatch.getClassSchema(), new java.io.ByteArrayOutputStream()))
                .hasMessageContaining("reading only");
    }

    @Test
    void aProviderWithBadSettingsFailsWhenTheJobIsBuilt() {
        assertThatThrownBy(() -> RegistrySchemaCoderProvider.forReading(Map.of()))
                .hasMessageContaining("schema.registry.url is not set");
    }
}
