package dev.kvrouter.bridge;

import dev.kvrouter.events.AllBlocksCleared;
import dev.kvrouter.events.BlockRemoved;
import dev.kvrouter.events.BlockStored;
import dev.kvrouter.schemas.BlockHashes;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessageFormatException;
import org.msgpack.core.MessageInsufficientBufferException;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageSizeException;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.core.buffer.ArrayBufferInput;
import org.msgpack.value.ValueType;

/**
 * Decodes vLLM's KV event batch payload (msgpack, {@code vllm/distributed/kv_events.py}) into the
 * project's Avro events. Accepts every encoding vLLM and SGLang releases have used:
 * <ul>
 *   <li>the batch as an array {@code [ts, events, data_parallel_rank]} or as a map with those keys;</li>
 *   <li>each event as an array whose first element is its tag ({@code "BlockStored"}, ...) followed by
 *       its fields in declaration order, or as a map with a {@code "type"} key;</li>
 *   <li>trailing fields missing (msgspec omits trailing defaults, and fields were added over time);
 *       unknown trailing fields or map keys are ignored;</li>
 *   <li>hashes as integers (unsigned 64-bit, or signed from releases that used Python's hash()) or
 *       8- or 32-byte binary digests.</li>
 * </ul>
 * Anything else is an {@link UndecodableFrameException} whose message says what was wrong and where.
 * Reads the payload in one pass without building a msgpack value tree (the bridge's hot path).
 * Stateless and thread-safe.
 */
public final class KvEventDecoder {

    /** The decoded content of one batch payload; rank is null when the engine sent none. */
    public record DecodedBatch(long tsMs, Integer dataParallelRank, List<Object> events) {}

    /** Each event type's fields in vLLM's declaration order: the positions of the array encoding. */
    private static final Map<String, List<String>> FIELDS = Map.of(
            "BlockStored", List.of("block_hashes", "parent_block_hash", "token_ids", "block_size", "lora_id", "medium",
                    "lora_name", "extra_keys", "group_idx", "kv_cache_spec_kind", "kv_cache_spec_sliding_window"),
            "BlockRemoved", List.of("block_hashes", "medium", "group_idx"),
            "AllBlocksCleared", List.of());

    private static final int UINT64_MARKER = 0xcf;

    public DecodedBatch decode(byte[] payload) throws UndecodableFrameException {
        if (payload == null || payload.length == 0) {
            throw new UndecodableFrameException("empty payload: expected a msgpack event batch");
        }
        try (Frame u = new Frame(payload)) {
            DecodedBatch batch = batch(u);
            if (u.hasNext()) {
                throw new UndecodableFrameException("payload has " + (payload.length - u.getTotalReadBytes())
                        + " trailing byte(s) after the event batch");
            }
            return batch;
        } catch (MessageInsufficientBufferException e) {
            throw new UndecodableFrameException("payload of " + payload.length + " bytes ends in the middle of a msgpack value (truncated?)", e);
        } catch (MessageFormatException e) {
            throw new UndecodableFrameException("payload is not msgpack: " + e.getMessage(), e);
        } catch (IOException | RuntimeException e) {
            // Invalid UTF-8, Avro builder checks, ...: still the frame's fault.
            throw new UndecodableFrameException("payload does not decode: " + e, e);
        }
    }

    private DecodedBatch batch(Frame u) throws IOException, UndecodableFrameException {
        ValueType type = type(u);
        Double seconds = null;
        List<Object> events = null;
        Integer rank = null;
        if (type == ValueType.ARRAY) {
            int n = u.arrayHeader("event batch array");
            if (n < 2) {
                throw new UndecodableFrameException("event batch array has " + n + " element(s); expected [ts, events, data_parallel_rank]");
            }
            seconds = seconds(u);
            events = events(u);
            if (n > 2) {
                rank = optionalInt(u, "data_parallel_rank");
            }
            skip(u, n - 3);
        } else if (type == ValueType.MAP) {
            int n = u.mapHeader("event batch map");
            List<String> keys = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                String key = type(u) == ValueType.STRING ? u.unpackString() : nonStringKey(u);
                keys.add(key);
                switch (key) {
                    case "ts" -> seconds = seconds(u);
                    case "events" -> events = events(u);
                    case "data_parallel_rank" -> rank = optionalInt(u, "data_parallel_rank");
                    default -> u.skipValue();
                }
            }
            if (seconds == null || events == null) {
                throw new UndecodableFrameException("event batch map lacks " + (seconds == null ? "'ts'" : "'events'") + "; keys: " + keys);
            }
        } else {
            throw new UndecodableFrameException("payload is a msgpack " + name(type) + ", not an event batch (array or map)");
        }
        if (!Double.isFinite(seconds) || seconds < 0) {
            throw new UndecodableFrameException("batch ts " + seconds + " is not a time");
        }
        return new DecodedBatch(Math.round(seconds * 1000), rank, events);
    }

    private static double seconds(Frame u) throws IOException, UndecodableFrameException {
        ValueType t = type(u);
        if (t == ValueType.FLOAT) {
            return u.unpackDouble();
        }
        if (t == ValueType.INTEGER) {
            return u.unpackLong();
        }
        throw new UndecodableFrameException("batch ts is a " + name(t) + ", expected a number of seconds");
    }

    private List<Object> events(Frame u) throws IOException, UndecodableFrameException {
        expect(u, ValueType.ARRAY, "batch events");
        int n = u.arrayHeader("batch events");
        List<Object> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            try {
                out.add(event(u));
            } catch (UndecodableFrameException e) {
                throw new UndecodableFrameException("event " + i + ": " + e.getMessage(), e);
            }
        }
        return out;
    }

    /** One event's fields as read; null = absent (left out, missing key, or nil). */
    private static final class EventFields {
        String type;
        List<ByteBuffer> blockHashes;
        ByteBuffer parentBlockHash;
        List<Integer> tokenIds;
        Integer blockSize;
        String medium;
        String loraName;
        List<String> extraKeys;
        Integer groupIdx;
        String specKind;
        Integer slidingWindow;

        <T> T required(T value, String name) throws UndecodableFrameException {
            if (value == null) {
                throw new UndecodableFrameException(type + " lacks " + name);
            }
            return value;
        }
    }

    /** One event, as a tagged array or a map with "type"; both fill the same fields by name. */
    private Object event(Frame u) throws IOException, UndecodableFrameException {
        EventFields f = new EventFields();
        ValueType t = type(u);
        if (t == ValueType.ARRAY) {
            int n = u.arrayHeader("event array");
            if (n == 0 || type(u) != ValueType.STRING) {
                throw new UndecodableFrameException("event array does not start with its type tag");
            }
            f.type = u.unpackString();
            List<String> names = FIELDS.get(f.type);
            if (names == null) {
                throw unknownType(f.type);
            }
            for (int i = 1; i < n; i++) {
                if (i - 1 < names.size()) {
                    field(u, names.get(i - 1), f);
                } else {
                    u.skipValue(); // a field from a newer release
                }
            }
        } else if (t == ValueType.MAP) {
            int n = u.mapHeader("event map");
            List<String> keys = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                if (type(u) != ValueType.STRING) {
                    keys.add(nonStringKey(u));
                    u.skipValue();
                    continue;
                }
                String key = u.unpackString();
                keys.add(key);
                if (key.equals("type")) {
                    if (type(u) != ValueType.STRING) {
                        throw new UndecodableFrameException("event map has no string 'type'; keys: " + keys);
                    }
                    f.type = u.unpackString();
                } else {
                    field(u, key, f);
                }
            }
            if (f.type == null) {
                throw new UndecodableFrameException("event map has no string 'type'; keys: " + keys);
            }
        } else {
            throw new UndecodableFrameException("event is a msgpack " + name(t) + ", expected a tagged array or a map");
        }
        return switch (f.type) {
            case "BlockStored" -> BlockStored.newBuilder()
                    .setBlockHashes(f.required(f.blockHashes, "block_hashes"))
                    .setParentBlockHash(f.parentBlockHash)
                    .setTokenIds(f.required(f.tokenIds, "token_ids"))
                    .setBlockSize(f.required(f.blockSize, "block_size"))
                    .setMedium(f.medium)
                    .setLoraName(f.loraName)
                    .setExtraKeys(f.extraKeys == null ? List.of() : f.extraKeys)
                    .setGroupIdx(f.groupIdx == null ? 0 : f.groupIdx)
                    .setKvCacheSpecKind(f.specKind)
                    .setKvCacheSpecSlidingWindow(f.slidingWindow)
                    .build();
            case "BlockRemoved" -> BlockRemoved.newBuilder()
                    .setBlockHashes(f.required(f.blockHashes, "block_hashes"))
                    .setMedium(f.medium)
                    .setGroupIdx(f.groupIdx == null ? 0 : f.groupIdx)
                    .build();
            // vLLM sends no fields; a map may name the medium.
            case "AllBlocksCleared" -> AllBlocksCleared.newBuilder().setMedium(f.medium).build();
            default -> throw unknownType(f.type);
        };
    }

    private static UndecodableFrameException unknownType(String type) {
        return new UndecodableFrameException("unknown event type '" + type + "' (known: BlockStored, BlockRemoved, AllBlocksCleared)");
    }

    /** Reads the value of one named field into {@code f}; unknown names are skipped (newer releases). */
    private static void field(Frame u, String name, EventFields f) throws IOException, UndecodableFrameException {
        switch (name) {
            case "block_hashes" -> f.blockHashes = hashes(u, name);
            case "parent_block_hash" -> f.parentBlockHash = nil(u) ? null : hash(u, name);
            case "token_ids" -> f.tokenIds = tokenIds(u);
            case "block_size" -> f.blockSize = optionalInt(u, name);
            case "medium" -> f.medium = optionalString(u, name);
            case "lora_name" -> f.loraName = optionalString(u, name);
            case "extra_keys" -> f.extraKeys = extraKeys(u);
            case "group_idx" -> f.groupIdx = optionalInt(u, name);
            case "kv_cache_spec_kind" -> f.specKind = optionalString(u, name);
            case "kv_cache_spec_sliding_window" -> f.slidingWindow = optionalInt(u, name);
            default -> u.skipValue(); // lora_id (deprecated in favour of lora_name) and fields from newer releases
        }
    }

    private static List<ByteBuffer> hashes(Frame u, String name) throws IOException, UndecodableFrameException {
        if (nil(u)) {
            return null;
        }
        expect(u, ValueType.ARRAY, name);
        int n = u.arrayHeader(name);
        List<ByteBuffer> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(hash(u, name));
        }
        return out;
    }

    private static ByteBuffer hash(Frame u, String name) throws IOException, UndecodableFrameException {
        MessageFormat format = u.getNextFormat();
        ValueType t = format.getValueType();
        if (t == ValueType.INTEGER) {
            if (format == MessageFormat.UINT64) {
                // Values of 2^63 and above do not fit a long: take the 8 bytes after the marker as they are,
                // which is exactly the hash's 8-byte big-endian form (and spares a BigInteger per hash).
                byte[] raw = u.readPayload(9);
                if ((raw[0] & 0xff) != UINT64_MARKER) {
                    throw new UndecodableFrameException(name + " has a malformed uint64");
                }
                return ByteBuffer.wrap(java.util.Arrays.copyOfRange(raw, 1, 9));
            }
            // Everything else fits a long; signed values (Python hash()) keep their 64 bits.
            return BlockHashes.ofUnsigned64(u.unpackLong());
        }
        if (t == ValueType.BINARY) {
            int length = u.unpackBinaryHeader();
            if (length != BlockHashes.U64_BYTES && length != BlockHashes.DIGEST_BYTES) {
                throw new UndecodableFrameException(name + " has a " + length + "-byte hash; expected 8 or 32 bytes");
            }
            return ByteBuffer.wrap(u.readPayload(length));
        }
        throw new UndecodableFrameException(name + " has a hash that is a " + name(t) + ", expected an integer or bytes");
    }

    private static List<Integer> tokenIds(Frame u) throws IOException, UndecodableFrameException {
        if (nil(u)) {
            return null;
        }
        expect(u, ValueType.ARRAY, "token_ids");
        int n = u.arrayHeader("token_ids");
        List<Integer> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(intValue(u, "token_ids"));
        }
        return out;
    }

    /**
     * vLLM sends one entry per block (a tuple of keys, or nil for a block without any). The schema keeps
     * a flat list of strings in engine order, so tuples are flattened and nils skipped; bytes are
     * rendered as lowercase hex, numbers and booleans as their msgpack text form. Read as a stream, so
     * a frame nested deeper than any real tuple is refused before it costs a stack frame per level.
     */
    private static List<String> extraKeys(Frame u) throws IOException, UndecodableFrameException {
        if (nil(u)) {
            return null;
        }
        expect(u, ValueType.ARRAY, "extra_keys");
        List<String> out = new ArrayList<>();
        flatten(u, out, 0);
        return out;
    }

    private static void flatten(Frame u, List<String> out, int depth) throws IOException, UndecodableFrameException {
        if (depth > 4) {
            throw new UndecodableFrameException("extra_keys nests deeper than 4 levels");
        }
        int n = u.arrayHeader("extra_keys");
        for (int i = 0; i < n; i++) {
            ValueType t = type(u);
            switch (t) {
                case NIL -> u.unpackNil();
                case ARRAY -> flatten(u, out, depth + 1);
                case STRING -> out.add(u.unpackString());
                case BINARY -> out.add(HexFormat.of().formatHex(u.readPayload(u.unpackBinaryHeader())));
                case INTEGER, FLOAT, BOOLEAN -> out.add(u.unpackValue().toJson());
                default -> throw new UndecodableFrameException("extra_keys holds a " + name(t) + "; expected strings, bytes or numbers");
            }
        }
    }

    /** A map key that is not a string, named by its type only (it is skipped, however it nests). */
    private static String nonStringKey(Frame u) throws IOException {
        String named = "<" + name(type(u)) + " key>";
        u.skipValue();
        return named;
    }

    private static int intValue(Frame u, String name) throws IOException, UndecodableFrameException {
        ValueType t = type(u);
        if (t != ValueType.INTEGER) {
            throw new UndecodableFrameException(name + " is a " + name(t) + ", expected an int");
        }
        if (u.getNextFormat() == MessageFormat.UINT64) {
            throw new UndecodableFrameException(name + " is out of int range (" + u.unpackValue() + "), expected an int");
        }
        long v = u.unpackLong();
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new UndecodableFrameException(name + " is out of int range (" + v + "), expected an int");
        }
        return (int) v;
    }

    private static Integer optionalInt(Frame u, String name) throws IOException, UndecodableFrameException {
        return nil(u) ? null : intValue(u, name);
    }

    private static String optionalString(Frame u, String name) throws IOException, UndecodableFrameException {
        if (nil(u)) {
            return null;
        }
        expect(u, ValueType.STRING, name);
        return u.unpackString();
    }

    /** Consumes a nil and says so; leaves anything else. */
    private static boolean nil(Frame u) throws IOException {
        return u.tryUnpackNil();
    }

    private static void expect(Frame u, ValueType expected, String name) throws IOException, UndecodableFrameException {
        ValueType t = type(u);
        if (t != expected) {
            throw new UndecodableFrameException(name + " is a " + name(t) + ", expected " + (expected == ValueType.ARRAY ? "an array" : "a " + name(expected))
                    + (name.equals("batch events") ? "" : " or nil"));
        }
    }

    private static ValueType type(Frame u) throws IOException {
        return u.getNextFormat().getValueType();
    }

    private static void skip(Frame u, int values) throws IOException {
        for (int i = 0; i < values; i++) {
            u.skipValue();
        }
    }

    private static String name(ValueType t) {
        return t.name().toLowerCase();
    }

    /**
     * The unpacker of one payload, which refuses a collection header that declares more elements than
     * bytes are left (every msgpack value takes at least one): a frame of a few bytes cannot make the
     * decoder reserve gigabytes. msgpack's own value reading goes through the same check.
     */
    private static final class Frame extends MessageUnpacker {
        private final int length;

        Frame(byte[] payload) {
            super(new ArrayBufferInput(payload), MessagePack.DEFAULT_UNPACKER_CONFIG);
            this.length = payload.length;
        }

        long remaining() {
            return length - getTotalReadBytes();
        }

        int arrayHeader(String what) throws IOException, UndecodableFrameException {
            int n = super.unpackArrayHeader();
            if (n > remaining()) {
                throw new UndecodableFrameException(what + " declares " + n + " element(s), more than the " + remaining() + " byte(s) left"
                        + " (truncated, or a size no frame holds)");
            }
            return n;
        }

        int mapHeader(String what) throws IOException, UndecodableFrameException {
            int n = super.unpackMapHeader();
            if (2L * n > remaining()) {
                throw new UndecodableFrameException(what + " declares " + n + " entries, more than the " + remaining() + " byte(s) left hold"
                        + " (truncated, or a size no frame holds)");
            }
            return n;
        }

        @Override
        public int unpackArrayHeader() throws IOException {
            int n = super.unpackArrayHeader();
            if (n > remaining()) {
                throw new MessageSizeException("an array declares " + n + " element(s), more than the " + remaining() + " byte(s) left", n);
            }
            return n;
        }

        @Override
        public int unpackMapHeader() throws IOException {
            int n = super.unpackMapHeader();
            if (2L * n > remaining()) {
                throw new MessageSizeException("a map declares " + n + " entries, more than the " + remaining() + " byte(s) left hold", n);
            }
            return n;
        }
    }
}
