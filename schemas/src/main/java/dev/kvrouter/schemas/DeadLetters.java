package dev.kvrouter.schemas;

import dev.kvrouter.dlq.DeadLetter;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Dead letters that always fit their topic. A rejected record can be as large as its own topic
 * allows ({@code kvr.kv-events}: 4 MiB) while {@code kvr.dead-letter} takes 1 MiB: a dead letter
 * keeps the first {@link #MAX_VALUE_BYTES} of the value and {@link #MAX_KEY_BYTES} of the key,
 * with the value's size and a truncated flag, so filing it can never fail the job or the bridge.
 */
public final class DeadLetters {

    /** The most of a rejected value a dead letter keeps: half the dead-letter topic's 1 MiB, room for the rest. */
    public static final int MAX_VALUE_BYTES = 512 * 1024;
    /** The most of a rejected key a dead letter keeps. */
    public static final int MAX_KEY_BYTES = 16 * 1024;

    private DeadLetters() {}

    /** A dead letter's builder with the record's key and value set, each cut to what a dead letter keeps. */
    public static DeadLetter.Builder of(byte[] key, byte[] value) {
        boolean truncated = (key != null && key.length > MAX_KEY_BYTES) || (value != null && value.length > MAX_VALUE_BYTES);
        return DeadLetter.newBuilder()
                .setSourceKey(key == null ? null : ByteBuffer.wrap(cut(key, MAX_KEY_BYTES)))
                .setRawValue(value == null ? null : ByteBuffer.wrap(cut(value, MAX_VALUE_BYTES)))
                .setRawValueBytes(value == null ? -1 : value.length)
                .setTruncated(truncated);
    }

    private static byte[] cut(byte[] bytes, int max) {
        return bytes.length <= max ? bytes : Arrays.copyOf(bytes, max);
    }
}
