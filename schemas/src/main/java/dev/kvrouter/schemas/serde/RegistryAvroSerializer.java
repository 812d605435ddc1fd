package dev.kvrouter.schemas.serde;

import dev.kvrouter.schemas.registry.SchemaRegistryClient;
import dev.kvrouter.schemas.registry.SchemaRegistryException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericContainer;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DatumWriter;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Kafka serializer for Avro records (generated or generic) in the Confluent wire format, against any
 * Confluent-compatible registry. Configure with {@code schema.registry.url}; see {@link AvroSerdeConfig}.
 */
public class RegistryAvroSerializer<T extends GenericContainer> implements Serializer<T> {

    private AvroSerdeConfig config;
    private SchemaRegistryClient client;
    private boolean isKey;
    private final ThreadLocal<BinaryEncoder> encoders = new ThreadLocal<>();
    /** Writers by schema; a serializer sees one or a few schemas, the cap only guards against misuse. */
    private final Map<Schema, DatumWriter<T>> writers = new ConcurrentHashMap<>();
    private static final int MAX_CACHED_WRITERS = 64;

    public RegistryAvroSerializer() {}

    /** For use without {@link #configure}: a client shared with other serdes. */
    public RegistryAvroSerializer(SchemaRegistryClient client, AvroSerdeConfig config, boolean isKey) {
        this.client = client;
        this.config = config;
        this.isKey = isKey;
    }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        this.isKey = isKey;
        this.config = AvroSerdeConfig.forKafka(configs, isKey);
        this.client = new SchemaRegistryClient(config.registry());
    }

    @Override
    public byte[] serialize(String topic, T record) {
        if (record == null) {
            return null;
        }
        if (client == null) {
            throw new IllegalStateException("RegistryAvroSerializer is not configured: pass schema.registry.url in the producer config");
        }
        Schema schema = record.getSchema();
        String subject = config.subjectNaming().subject(topic, isKey, schema);
        int id;
        try {
            id = config.autoRegister() ? client.register(subject, schema)
                    : client.lookup(subject, schema).orElseThrow(() -> new SerializationException(
                            "schema " + schema.getFullName() + " is not registered under subject '" + subject
                                    + "' and auto.register.schemas is false: register it first"));
        } catch (SchemaRegistryException e) {
            throw new SerializationException("cannot serialize a " + schema.getFullName() + " to topic '" + topic
                    + "': " + e.getMessage(), e);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(256);
        out.writeBytes(ConfluentWireFormat.header(id));
        BinaryEncoder encoder = EncoderFactory.get().directBinaryEncoder(out, encoders.get());
        encoders.set(encoder);
        try {
            writer(record, schema).write(record, encoder);
            encoder.flush();
        } catch (IOException | RuntimeException e) {
            throw new SerializationException("cannot encode a " + schema.getFullName() + " for topic '" + topic
                    + "': " + e.getMessage(), e);
        }
        return out.toByteArray();
    }

    private DatumWriter<T> writer(T record, Schema schema) {
        DatumWriter<T> cached = writers.get(schema);
        if (cached != null) {
            return cached;
        }
        if (writers.size() >= MAX_CACHED_WRITERS) {
            writers.clear();
        }
        DatumWriter<T> writer = record instanceof SpecificRecord ? new SpecificDatumWriter<>(schema) : new GenericDatumWriter<>(schema);
        writers.put(schema, writer);
        return writer;
    }
}
