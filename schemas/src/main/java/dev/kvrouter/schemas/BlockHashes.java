package dev.kvrouter.schemas;

import java.nio.ByteBuffer;

/**
 * Engine block hashes travel as bytes: 8 bytes big-endian for vLLM's unsigned 64-bit hashes (values
 * above 2^63 occur, so a Java long holds them as two's complement), or 32-byte digests.
 */
public final class BlockHashes {

    public static final int U64_BYTES = 8;
    public static final int DIGEST_BYTES = 32;

    private BlockHashes() {}

    public static ByteBuffer ofUnsigned64(long hash) {
        return ByteBuffer.allocate(U64_BYTES).putLong(0, hash);
    }

    /** Parses a decimal unsigned 64-bit hash as engines print it (up to 18446744073709551615). */
    public static ByteBuffer ofUnsigned64(String decimal) {
        return ofUnsigned64(Long.parseUnsignedLong(decimal));
    }

    public static boolean isUnsigned64(ByteBuffer hash) {
        return hash.remaining() == U64_BYTES;
    }

    public static long toUnsigned64(ByteBuffer hash) {
        if (hash.remaining() != U64_BYTES) {
            throw new IllegalArgumentException("a 64-bit block hash has 8 bytes, this one " + hash.remaining());
        }
        return hash.getLong(hash.position());
    }
}
