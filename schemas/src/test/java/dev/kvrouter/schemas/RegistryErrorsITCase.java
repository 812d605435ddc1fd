package dev.kvrouter.schemas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.events.RoutingDecision;
import dev.kvrouter.schemas.registry.RegistrySettings;
import dev.kvrouter.schemas.registry.SchemaRegistryClient;
import dev.kvrouter.schemas.registry.SchemaRegistryException;
import dev.kvrouter.schemas.serde.ConfluentWireFormat;
import dev.kvrouter.schemas.serde.RegistryAvroDeserializer;
import dev.kvrouter.schemas.serde.RegistryAvroSerializer;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.LocalStackExtension;
import dev.kvrouter.stack.junit.UniqueNames;
import java.net.ServerSocket;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The registry client against the real (Apicurio, BACKWARD) registry, and the errors a user must be able to read. */
@ExtendWith(LocalStackExtension.class)
class RegistryErrorsITCase {

    private SchemaRegistryClient client;
    private StackAddresses stack;

    @BeforeEach
    void connect(StackAddresses stack) {
        this.stack = stack;
        this.client = new SchemaRegistryClient(RegistrySettings.of(stack.schemaRegistryUrl()));
    }

    @Test
    void registerIsIdempotentAndLookupAndGetByIdAgree() {
        String subject = UniqueNames.topic("it-subject");
        Schema schema = EngineLoad.getClassSchema();
        assertThat(client.lookup(subject, schema)).isEmpty();
        int id = client.register(subject, schema);
        // A fresh client (no cache) gets the same answers from the registry itself.
        SchemaRegistryClient fresh = new SchemaRegistryClient(RegistrySettings.of(stack.schemaRegistryUrl()));
        assertThat(fresh.register(subject, schema)).isEqualTo(id);
        assertThat(fresh.lookup(subject, schema)).hasValue(id);
        assertThat(fresh.schemaById(id).getFullName()).isEqualTo(schema.getFullName());
        assertThat(fresh.subjects()).contains(subject);
    }

    @Test
    void anIncompatibleSchemaIsRefusedUnderTheBackwardRule() {
        String subject = UniqueNames.topic("it-compat");
        Schema v1 = SchemaBuilder.record("Probe").namespace("it").fields().requiredString("a").endRecord();
        Schema v2Breaking = SchemaBuilder.record("Probe").namespace("it").fields().requiredString("a").requiredLong("b").endRecord();
        Schema v2Evolving = SchemaBuilder.record("Probe").namespace("it").fields().requiredString("a")
                .name("b").type().longType().longDefault(0).endRecord();
        client.register(subject, v1);

        assertThat(client.isCompatible(subject, v2Breaking)).isFalse();
        assertThatThrownBy(() -> client.register(subject, v2Breaking))
                .isInstanceOf(SchemaRegistryException.Incompatible.class)
                .hasMessageContaining("refused to register a schema under subject '" + subject + "'")
                .hasMessageContaining("HTTP 409");

        assertThat(client.isCompatible(subject, v2Evolving)).isTrue();
        assertThat(client.register(subject, v2Evolving)).isNotEqualTo(client.register(subject, v1));
    }

    @Test
    void anUnknownIdIsNamed() {
        assertThatThrownBy(() -> client.schemaById(987_654_321))
                .isInstanceOf(SchemaRegistryException.UnknownSchemaId.class)
                .hasMessageContaining("schema id 987654321 is unknown to the registry");

        byte[] unknownId = new byte[] {0, 0x3a, (byte) 0xde, 0x68, (byte) 0xb1, 2};
        try (RegistryAvroDeserializer<Object> deserializer = configuredDeserializer(stack.schemaRegistryUrl())) {
            assertThatThrownBy(() -> deserializer.deserialize("t", unknownId))
                    .isInstanceOf(SerializationException.class)
                    .hasMessageContaining("cannot deserialize a record of topic 't'")
                    .hasMessageContaining("is unknown to the registry");
        }
    }

    @Test
    void bytesThatAreNotTheFormatAreNamed() {
        try (RegistryAvroDeserializer<Object> deserializer = configuredDeserializer(stack.schemaRegistryUrl())) {
            assertThatThrownBy(() -> deserializer.deserialize("t", "{\"engine\":1}".getBytes()))
                    .isInstanceOf(SerializationException.class)
                    .hasMessageContaining("expected the magic byte 0x00")
                    .hasCauseInstanceOf(ConfluentWireFormat.MalformedWireFormatException.class);
        }
    }

    @Test
    void anUnreachableRegistryIsNamedWithItsAddress() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        String url = "http://127.0.0.1:" + closedPort;
        SchemaRegistryClient unreachable = new SchemaRegistryClient(RegistrySettings.of(url));
        assertThatThrownBy(() -> unreachable.schemaById(1))
                .isInstanceOf(SchemaRegistryException.Unreachable.class)
                .hasMessageContaining("schema registry unreachable, could not fetch schema id 1")
                .hasMessageContaining(url);

        try (RegistryAvroSerializer<GenericRecord> serializer = new RegistryAvroSerializer<>()) {
            serializer.configure(Map.of(RegistrySettings.URL, url), false);
            Schema s = SchemaBuilder.record("P").fields().requiredInt("x").endRecord();
            GenericRecord r = new GenericData.Record(s);
            r.put("x", 1);
            assertThatThrownBy(() -> serializer.serialize("topic-x", r))
                    .isInstanceOf(SerializationException.class)
                    .hasMessageContaining("cannot serialize a P to topic 'topic-x'")
                    .hasMessageContaining("unreachable");
        }
    }

    @Test
    void withoutAutoRegisterAnUnregisteredSchemaSaysToRegisterIt() {
        try (RegistryAvroSerializer<EngineLoad> serializer = new RegistryAvroSerializer<>()) {
            serializer.configure(Map.of(RegistrySettings.URL, stack.schemaRegistryUrl(), "auto.register.schemas", "false"), false);
            String topic = UniqueNames.topic("it-noauto");
            assertThatThrownBy(() -> serializer.serialize(topic, SampleRecords.engineLoad()))
                    .isInstanceOf(SerializationException.class)
                    .hasMessageContaining("is not registered under subject '" + topic + "-value'")
                    .hasMessageContaining("register it first");
        }
    }

    /**
     * A record of a few bytes that declares a collection, string or bytes of about 2^31 is refused with
     * a reason before anything of that size is reserved (a balancer writes these topics: one bad
     * record must not crash-loop the job).
     */
    @Test
    void hostileSizesInTheAvroBodyAreRefusedBeforeTheyAreAllocated() {
        String subject = UniqueNames.topic("it-hostile") + "-value";
        int batchId = client.register(subject, KvEventBatch.getClassSchema());
        long huge = Integer.MAX_VALUE - 9;
        // KvEventBatch: engine_id "e", rank null, model "m", seq 0, ts 0, then the events array's first block.
        byte[] batchHead = {2, 'e', 0, 2, 'm', 0, 0};
        try (RegistryAvroDeserializer<Object> deserializer = configuredDeserializer(stack.schemaRegistryUrl())) {
            assertThatThrownBy(() -> deserializer.deserialize("t", wire(batchId, batchHead, zigzag(huge))))
                    .isInstanceOf(SerializationException.class)
                    .hasMessageContaining("declares " + huge + " item(s)");
            assertThatThrownBy(() -> deserializer.deserialize("t", wire(batchId, zigzag(huge))))
                    .isInstanceOf(SerializationException.class)
                    .hasMessageContaining("declares a string of " + huge + " byte(s)");
            // An events block of one BlockStored whose block_hashes declare 2^31 items.
            assertThatThrownBy(() -> deserializer.deserialize("t", wire(batchId, batchHead, new byte[] {2, 0}, zigzag(huge))))
                    .isInstanceOf(SerializationException.class)
                    .hasMessageContaining("declares " + huge + " item(s)");
            // A negative block count (Avro's sized block) of 2^31 items.
            assertThatThrownBy(() -> deserializer.deserialize("t", wire(batchId, batchHead, zigzag(-huge), zigzag(1))))
                    .isInstanceOf(SerializationException.class)
                    .hasMessageContaining("declares " + huge + " item(s)");
            // A well-formed record still decodes.
            try (RegistryAvroSerializer<RoutingDecision> serializer = new RegistryAvroSerializer<>()) {
                serializer.configure(Map.of(RegistrySettings.URL, stack.schemaRegistryUrl()), false);
                byte[] decision = serializer.serialize(UniqueNames.topic("it-hostile"), SampleRecords.routingDecision());
                assertThat(deserializer.deserialize("t", decision)).isEqualTo(SampleRecords.routingDecision());
            }
        }
    }

    private static byte[] wire(int schemaId, byte[]... body) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        out.write(0);
        out.writeBytes(java.nio.ByteBuffer.allocate(4).putInt(schemaId).array());
        for (byte[] part : body) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }

    /** Avro's long encoding: zig-zag, then 7 bits a byte. */
    private static byte[] zigzag(long v) {
        long z = (v << 1) ^ (v >> 63);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        while ((z & ~0x7FL) != 0) {
            out.write((int) ((z & 0x7F) | 0x80));
            z >>>= 7;
        }
        out.write((int) z);
        return out.toByteArray();
    }

    private static RegistryAvroDeserializer<Object> configuredDeserializer(String url) {
        RegistryAvroDeserializer<Object> d = new RegistryAvroDeserializer<>();
        d.configure(Map.of(RegistrySettings.URL, url), false);
        return d;
    }
}
