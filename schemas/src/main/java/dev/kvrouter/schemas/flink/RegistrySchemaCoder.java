package dev.kvrouter.schemas.flink;

import dev.kvrouter.schemas.registry.SchemaRegistryClient;
import dev.kvrouter.schemas.serde.ConfluentWireFormat;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import org.apache.avro.Schema;
import org.apache.flink.formats.avro.SchemaCoder;

/**
 * flink-avro's SchemaCoder on the project's registry client: the Confluent header for
 * {@code RegistryAvroSerializationSchema} / {@code RegistryAvroDeserializationSchema}, with no
 * Confluent jar on the classpath.
 */
public final class RegistrySchemaCoder implements SchemaCoder {

    private final SchemaRegistryClient client;
    private final String subject;
    private final boolean autoRegister;

    /** {@code subject} may be null for a coder that only reads. */
    public RegistrySchemaCoder(SchemaRegistryClient client, String subject, boolean autoRegister) {
        this.client = client;
        this.subject = subject;
        this.autoRegister = autoRegister;
    }

    @Override
    public Schema readSchema(InputStream in) throws IOException {
        DataInputStream data = new DataInputStream(in);
        int magic = data.read();
        if (magic < 0) {
            throw new IOException("not in the Confluent wire format: empty message");
        }
        try {
            ConfluentWireFormat.checkMagic(magic);
            return client.schemaById(data.readInt());
        } catch (ConfluentWireFormat.MalformedWireFormatException e) {
            throw new IOException(e.getMessage(), e);
        } catch (java.io.EOFException e) {
            throw new IOException("not in the Confluent wire format: shorter than the 5-byte header", e);
        }
    }

    @Override
    public void writeSchema(Schema schema, OutputStream out) throws IOException {
        if (subject == null) {
            throw new IllegalStateException("this schema coder was made for reading only: give a subject to write");
        }
        int id = autoRegister ? client.register(subject, schema)
                : client.lookup(subject, schema).orElseThrow(() -> new IllegalStateException("schema "
                        + schema.getFullName() + " is not registered under subject '" + subject + "' and auto-register is off"));
        out.write(ConfluentWireFormat.header(id));
    }
}
