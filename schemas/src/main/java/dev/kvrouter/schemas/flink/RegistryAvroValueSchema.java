package dev.kvrouter.schemas.flink;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.avro.Schema;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.avro.specific.SpecificRecord;
import org.apache.flink.api.common.serialization.SerializationSchema;
import org.apache.flink.formats.avro.SchemaCoder;

/**
 * Generated Avro records as Kafka values in the Confluent wire format: the same bytes as flink-avro's
 * {@code RegistryAvroSerializationSchema} with {@link RegistrySchemaCoder} (and as the Kafka serde),
 * for less per record. The job's changelogs write one record per change of the view, so:
 * <ul>
 *   <li>the 5-byte header is asked of the registry once: a subject gives one schema one id for good;</li>
 *   <li>a record encodes itself (Avro's generated custom coders, field by field) instead of being
 *       walked through its schema with a boxed value per field.</li>
 * </ul>
 * A registry that cannot be reached fails the first record, as the per-record lookup did.
 */
public final class RegistryAvroValueSchema<T extends SpecificRecord> implements SerializationSchema<T> {

    private static final long serialVersionUID = 1L;

    private final Class<T> type;
    private final SchemaCoder.SchemaCoderProvider coderProvider;

    private transient Schema schema;
    private transient SchemaCoder coder;
    private transient SpecificDatumWriter<T> writer;
    private transient ByteArrayOutputStream bytes;
    private transient BinaryEncoder encoder;
    private transient byte[] header;

    public RegistryAvroValueSchema(Class<T> type, SchemaCoder.SchemaCoderProvider coderProvider) {
        this.type = type;
        this.coderProvider = coderProvider;
    }

    @Override
    public void open(InitializationContext context) {
        prepare();
    }

    private void prepare() {
        SpecificData model = new SpecificData(type.getClassLoader());
        model.setCustomCoders(true); // off by default in Avro (a system property): ours are generated with the records
        schema = model.getSchema(type);
        writer = new SpecificDatumWriter<>(schema, model);
        coder = coderProvider.get();
        bytes = new ByteArrayOutputStream(256);
        encoder = EncoderFactory.get().binaryEncoder(bytes, null); // flushed after every record: always empty between them
    }

    @Override
    public byte[] serialize(T record) {
        if (writer == null) {
            prepare(); // used without open(), as a plain serializer
        }
        try {
            if (header == null) {
                ByteArrayOutputStream h = new ByteArrayOutputStream(5);
                coder.writeSchema(schema, h);
                header = h.toByteArray();
            }
            bytes.reset();
            bytes.write(header);
            writer.write(record, encoder);
            encoder.flush();
            return bytes.toByteArray();
        } catch (IOException | RuntimeException e) {
            // Nothing of a failed record (a required field left null, say) may lead the next one.
            encoder = EncoderFactory.get().binaryEncoder(bytes, null);
            if (e instanceof IOException io) {
                throw new UncheckedIOException("cannot write " + type.getSimpleName() + " for Kafka: " + io.getMessage(), io);
            }
            throw (RuntimeException) e;
        }
    }
}
