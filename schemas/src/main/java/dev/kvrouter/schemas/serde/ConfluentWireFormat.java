package dev.kvrouter.schemas.serde;

import java.nio.ByteBuffer;

/**
 * The Confluent wire format: magic byte 0, the schema id as 4 bytes big-endian, then the Avro
 * binary body. Shared by the Kafka serdes and the Flink SchemaCoder.
 */
public final class ConfluentWireFormat {

    public static final byte MAGIC_BYTE = 0;
    public static final int HEADER_SIZE = 5;

    private ConfluentWireFormat() {}

    public static byte[] header(int schemaId) {
        return ByteBuffer.allocate(HEADER_SIZE).put(MAGIC_BYTE).putInt(schemaId).array();
    }

    /**
     * Reads the header and returns the schema id; the buffer is left at the Avro body.
     *
     * @throws MalformedWireFormatException when the bytes are not in the format
     */
    public static int readSchemaId(ByteBuffer buffer) {
        if (buffer.remaining() < HEADER_SIZE) {
            throw new MalformedWireFormatException("not in the Confluent wire format: " + buffer.remaining()
                    + " bytes, fewer than the 5-byte header (magic byte 0 + schema id)");
        }
        byte magic = buffer.get();
        checkMagic(magic);
        return buffer.getInt();
    }

    public static void checkMagic(int magic) {
        if (magic != MAGIC_BYTE) {
            throw new MalformedWireFormatException(String.format(
                    "not in the Confluent wire format: first byte is 0x%02x, expected the magic byte 0x00 "
                            + "(was this written by a plain Avro, JSON or string serializer?)", magic & 0xff));
        }
    }

    /** Bytes that do not start with the Confluent header. */
    public static final class MalformedWireFormatException extends IllegalArgumentException {
        public MalformedWireFormatException(String message) {
            super(message);
        }
    }
}
