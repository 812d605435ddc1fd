package dev.kvrouter.schemas.serde;

import dev.kvrouter.schemas.registry.SchemaRegistryClient;
import dev.kvrouter.schemas.registry.SchemaRegistryException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.io.DatumReader;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Kafka deserializer for the Confluent wire format. The writer's schema comes from the registry by
 * the id in the header; with {@code specific.avro.reader=true} (default) the record is read into
 * the generated class of the same full name, resolving schema evolution, else as a GenericRecord.
 */
public class RegistryAvroDeserializer<T> implements Deserializer<T> {

    private AvroSerdeConfig config;
    private SchemaRegistryClient client;
    /** Readers by writer schema id; a topic carries one or a few versions, the cap guards against misuse. */
    private final Map<Integer, DatumReader<T>> readers = new ConcurrentHashMap<>();
    private static final int MAX_CACHED_READERS = 64;

    public RegistryAvroDeserializer() {}

    /** For use without {@link #configure}: a client shared with other serdes. */
    public RegistryAvroDeserializer(SchemaRegistryClient client, AvroSerdeConfig config) {
        this.client = client;
        this.config = config;
    }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        this.config = AvroSerdeConfig.forKafka(configs, isKey);
        this.client = new SchemaRegistryClient(config.registry());
    }

    @Override
    public T deserialize(String topic, byte[] data) {
        if (data == null) {
            return null;
        }
        if (client == null) {
            throw new IllegalStateException("RegistryAvroDeserializer is not configured: pass schema.registry.url in the consumer config");
        }
        ByteBuffer buffer = ByteBuffer.wrap(data);
        int id;
        Schema writer;
        try {
            id = ConfluentWireFormat.readSchemaId(buffer);
            writer = client.schemaById(id);
        } catch (ConfluentWireFormat.MalformedWireFormatException | SchemaRegistryException e) {
            throw new SerializationException("cannot deserialize a record of topic '" + topic + "': " + e.getMessage(), e);
        }
        try {
            // Sizes bounded by the record's bytes: a few hostile bytes cannot reserve gigabytes.
            return reader(id, writer).read(null, new BoundedBinaryDecoder(data, buffer.position(), buffer.remaining()));
        } catch (IOException | RuntimeException e) {
            throw new SerializationException("cannot decode the Avro body of a record of topic '" + topic
                    + "' written with schema id " + id + " (" + writer.getFullName() + "): " + e.getMessage(), e);
        }
    }

    private DatumReader<T> reader(int id, Schema writer) {
        DatumReader<T> cached = readers.get(id);
        if (cached != null) {
            return cached;
        }
        if (readers.size() >= MAX_CACHED_READERS) {
            readers.clear();
        }
        DatumReader<T> reader = newReader(writer);
        readers.put(id, reader);
        return reader;
    }

    private DatumReader<T> newReader(Schema writer) {
        if (config.specificReader()) {
            Class<?> generated = SpecificData.get().getClass(writer);
            if (generated != null) {
                return new SpecificDatumReader<>(writer, SpecificData.get().getSchema(generated));
            }
        }
        return new GenericDatumReader<>(writer);
    }
}
