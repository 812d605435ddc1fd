package dev.kvrouter.bridge;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * Writes KV event batches exactly as vLLM's publisher puts them on the wire (msgpack through msgspec),
 * in either of the encodings releases have used. As msgspec's {@code omit_defaults=True} does, a field
 * that has a default ({@code = None} in vllm/distributed/kv_events.py) is left out when it is null: in
 * a map, wherever it is; in an array, only at the end. For the bridge's tests, its benchmark and for
 * anyone who needs a stand-in engine: {@link #frames} gives the three ZMQ frames of one message.
 */
public final class VllmEventEncoder {

    /** How events are encoded: older releases as arrays led by the type tag, newer as maps with "type". */
    public enum Encoding { TAGGED_ARRAY, MAP }

    /** One named field of an event, in vLLM's declaration order; {@code hasDefault}: declared {@code = None}, so omitted when null. */
    public record Field(String name, Object value, boolean hasDefault) {
        public Field(String name, Object value) {
            this(name, value, false);
        }

        boolean omitted() {
            return hasDefault && value == null;
        }
    }

    /** An event: its type tag and fields in order. {@link #first} keeps only leading fields (older releases). */
    public record Event(String type, List<Field> fields) {
        public Event first(int count) {
            return new Event(type, fields.subList(0, Math.min(count, fields.size())));
        }
    }

    private VllmEventEncoder() {}

    /**
     * A BlockStored with every field vLLM has had. Hashes are {@code Long} (written as msgpack
     * unsigned 64-bit, so negative longs become values of 2^63 and above) or {@code byte[]} digests.
     */
    public static Event blockStored(List<?> hashes, Object parent, int[] tokenIds, int blockSize, Integer loraId, String medium,
                                    String loraName, List<?> extraKeys, Integer groupIdx, String specKind, Integer slidingWindow) {
        return new Event("BlockStored", List.of(new Field("block_hashes", hashes), new Field("parent_block_hash", parent),
                new Field("token_ids", tokenIds), new Field("block_size", blockSize), new Field("lora_id", loraId),
                new Field("medium", medium), new Field("lora_name", loraName), new Field("extra_keys", extraKeys, true),
                new Field("group_idx", groupIdx, true), new Field("kv_cache_spec_kind", specKind, true),
                new Field("kv_cache_spec_sliding_window", slidingWindow, true)));
    }

    public static Event blockRemoved(List<?> hashes, String medium, Integer groupIdx) {
        return new Event("BlockRemoved", List.of(new Field("block_hashes", hashes), new Field("medium", medium),
                new Field("group_idx", groupIdx, true)));
    }

    public static Event allBlocksCleared() {
        return new Event("AllBlocksCleared", List.of());
    }

    /**
     * The payload: {@code [ts, events, data_parallel_rank]}, or the same as a map when {@code batchAsMap};
     * a null rank (its default) is left out.
     */
    public static byte[] batch(double tsSeconds, List<Event> events, Integer dataParallelRank, Encoding encoding, boolean batchAsMap) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            int entries = dataParallelRank == null ? 2 : 3;
            if (batchAsMap) {
                p.packMapHeader(entries);
                p.packString("ts");
                p.packDouble(tsSeconds);
                p.packString("events");
            } else {
                p.packArrayHeader(entries);
                p.packDouble(tsSeconds);
            }
            p.packArrayHeader(events.size());
            for (Event e : events) {
                if (encoding == Encoding.TAGGED_ARRAY) {
                    // array_like: only trailing defaults can be left out, or the positions would shift.
                    int written = e.fields().size();
                    while (written > 0 && e.fields().get(written - 1).omitted()) {
                        written--;
                    }
                    p.packArrayHeader(1 + written);
                    p.packString(e.type());
                    for (Field f : e.fields().subList(0, written)) {
                        value(p, f.value());
                    }
                } else {
                    List<Field> written = e.fields().stream().filter(f -> !f.omitted()).toList();
                    p.packMapHeader(1 + written.size());
                    p.packString("type");
                    p.packString(e.type());
                    for (Field f : written) {
                        p.packString(f.name());
                        value(p, f.value());
                    }
                }
            }
            if (dataParallelRank != null) {
                if (batchAsMap) {
                    p.packString("data_parallel_rank");
                }
                p.packInt(dataParallelRank);
            }
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The three frames of one message: topic (UTF-8), sequence (8 bytes big-endian), payload. */
    public static List<byte[]> frames(String topic, long seq, byte[] payload) {
        return List.of(topic.getBytes(StandardCharsets.UTF_8), ByteBuffer.allocate(8).putLong(seq).array(), payload);
    }

    private static void value(MessageBufferPacker p, Object v) throws IOException {
        if (v == null) {
            p.packNil();
        } else if (v instanceof Long l) {
            if (l < 0) {
                p.packBigInteger(new BigInteger(Long.toUnsignedString(l))); // uint64 above 2^63
            } else {
                p.packLong(l);
            }
        } else if (v instanceof Integer i) {
            p.packInt(i);
        } else if (v instanceof Double d) {
            p.packDouble(d);
        } else if (v instanceof String s) {
            p.packString(s);
        } else if (v instanceof byte[] b) {
            p.packBinaryHeader(b.length);
            p.writePayload(b);
        } else if (v instanceof int[] ints) {
            p.packArrayHeader(ints.length);
            for (int i : ints) {
                p.packInt(i);
            }
        } else if (v instanceof List<?> list) {
            p.packArrayHeader(list.size());
            for (Object o : list) {
                value(p, o);
            }
        } else if (v instanceof Object[] array) {
            value(p, Arrays.asList(array));
        } else {
            throw new IllegalArgumentException("cannot encode a " + v.getClass().getName());
        }
    }

    /** {@code count} distinct unsigned 64-bit hashes from {@code seed}, half of them at 2^63 or above. */
    public static List<Long> hashes(long seed, int count) {
        List<Long> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            long h = (seed + i) * 0x9E3779B97F4A7C15L;
            out.add(i % 2 == 0 ? h | Long.MIN_VALUE : h & Long.MAX_VALUE);
        }
        return out;
    }
}
