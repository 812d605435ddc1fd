package dev.kvrouter.bridge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvrouter.events.AllBlocksCleared;
import dev.kvrouter.events.BlockRemoved;
import dev.kvrouter.events.BlockStored;
import dev.kvrouter.schemas.BlockHashes;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/** The decoder on payloads packed byte by byte with msgpack-core, as vLLM's msgspec writes them. */
class KvEventDecoderTest {

    private static final BigInteger HIGH = new BigInteger("18446744073709551557"); // 2^64 - 59, above 2^63
    private final KvEventDecoder decoder = new KvEventDecoder();

    private interface Body {
        void write(MessageBufferPacker p) throws Exception;
    }

    private static byte[] pack(Body body) throws Exception {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            body.write(p);
            return p.toByteArray();
        }
    }

    private static void bin(MessageBufferPacker p, byte[] b) throws Exception {
        p.packBinaryHeader(b.length);
        p.writePayload(b);
    }

    private static byte[] digest(int seed) {
        byte[] d = new byte[32];
        Arrays.fill(d, (byte) seed);
        d[31] = (byte) 0xFF;
        return d;
    }

    @Test
    void arrayBatchWithTaggedArrayEventsOfEveryKindAndEveryField() throws Exception {
        byte[] payload = pack(p -> {
            p.packArrayHeader(3);
            p.packDouble(1_700_000_000.123);
            p.packArrayHeader(3);
            // BlockStored: tag + 11 fields
            p.packArrayHeader(12);
            p.packString("BlockStored");
            p.packArrayHeader(2);
            p.packBigInteger(HIGH);          // uint64 above 2^63
            p.packLong(42);                  // small uint
            p.packBigInteger(BigInteger.valueOf(7)); // parent
            p.packArrayHeader(4);
            for (int t : new int[] {1, 2, 3, 4}) {
                p.packInt(t);
            }
            p.packInt(2);                    // block_size
            p.packInt(0);                    // lora_id (deprecated, ignored)
            p.packString("GPU");
            p.packString("my-lora");
            p.packArrayHeader(2);            // extra_keys: one tuple per block, nil for none
            p.packArrayHeader(2);
            p.packString("img:1f");
            p.packInt(5);
            p.packNil();
            p.packInt(1);                    // group_idx
            p.packString("sliding_window");
            p.packInt(4096);
            // BlockRemoved: tag + 3 fields
            p.packArrayHeader(4);
            p.packString("BlockRemoved");
            p.packArrayHeader(1);
            p.packBigInteger(HIGH);
            p.packString("CPU");
            p.packInt(1);
            // AllBlocksCleared: tag only
            p.packArrayHeader(1);
            p.packString("AllBlocksCleared");
            p.packInt(3);                    // data_parallel_rank
        });

        KvEventDecoder.DecodedBatch batch = decoder.decode(payload);

        assertThat(batch.tsMs()).isEqualTo(1_700_000_000_123L);
        assertThat(batch.dataParallelRank()).isEqualTo(3);
        assertThat(batch.events()).hasSize(3);
        BlockStored stored = (BlockStored) batch.events().get(0);
        assertThat(stored.getBlockHashes()).containsExactly(BlockHashes.ofUnsigned64(HIGH.toString()), BlockHashes.ofUnsigned64(42));
        assertThat(BlockHashes.toUnsigned64(stored.getBlockHashes().get(0))).isEqualTo(HIGH.longValue());
        assertThat(stored.getParentBlockHash()).isEqualTo(BlockHashes.ofUnsigned64(7));
        assertThat(stored.getTokenIds()).containsExactly(1, 2, 3, 4);
        assertThat(stored.getBlockSize()).isEqualTo(2);
        assertThat(stored.getMedium()).isEqualTo("GPU");
        assertThat(stored.getLoraName()).isEqualTo("my-lora");
        assertThat(stored.getExtraKeys()).containsExactly("img:1f", "5");
        assertThat(stored.getGroupIdx()).isEqualTo(1);
        assertThat(stored.getKvCacheSpecKind()).isEqualTo("sliding_window");
        assertThat(stored.getKvCacheSpecSlidingWindow()).isEqualTo(4096);
        BlockRemoved removed = (BlockRemoved) batch.events().get(1);
        assertThat(removed.getBlockHashes()).containsExactly(BlockHashes.ofUnsigned64(HIGH.toString()));
        assertThat(removed.getMedium()).isEqualTo("CPU");
        assertThat(removed.getGroupIdx()).isEqualTo(1);
        assertThat(batch.events().get(2)).isEqualTo(AllBlocksCleared.newBuilder().setMedium(null).build());
    }

    @Test
    void mapBatchWithMapEventsAndDigestHashes() throws Exception {
        byte[] payload = pack(p -> {
            p.packMapHeader(3);
            p.packString("ts");
            p.packDouble(12.5);
            p.packString("events");
            p.packArrayHeader(3);
            p.packMapHeader(6);
            p.packString("type");
            p.packString("BlockStored");
            p.packString("block_hashes");
            p.packArrayHeader(2);
            bin(p, digest(1));
            bin(p, digest(2));
            p.packString("parent_block_hash");
            bin(p, digest(0));
            p.packString("token_ids");
            p.packArrayHeader(2);
            p.packInt(10);
            p.packInt(11);
            p.packString("block_size");
            p.packInt(1);
            p.packString("some_future_field");   // unknown keys are ignored
            p.packBoolean(true);
            p.packMapHeader(2);
            p.packString("type");
            p.packString("BlockRemoved");
            p.packString("block_hashes");
            p.packArrayHeader(1);
            bin(p, digest(2));
            p.packMapHeader(1);
            p.packString("type");
            p.packString("AllBlocksCleared");
            p.packString("data_parallel_rank");
            p.packNil();
        });

        KvEventDecoder.DecodedBatch batch = decoder.decode(payload);

        assertThat(batch.tsMs()).isEqualTo(12_500);
        assertThat(batch.dataParallelRank()).isNull();
        BlockStored stored = (BlockStored) batch.events().get(0);
        assertThat(stored.getBlockHashes()).containsExactly(ByteBuffer.wrap(digest(1)), ByteBuffer.wrap(digest(2)));
        assertThat(stored.getParentBlockHash()).isEqualTo(ByteBuffer.wrap(digest(0)));
        assertThat(stored.getTokenIds()).containsExactly(10, 11);
        // Fields the engine did not send take the schema's defaults.
        assertThat(stored.getMedium()).isNull();
        assertThat(stored.getLoraName()).isNull();
        assertThat(stored.getExtraKeys()).isEmpty();
        assertThat(stored.getGroupIdx()).isZero();
        assertThat(stored.getKvCacheSpecKind()).isNull();
        assertThat(stored.getKvCacheSpecSlidingWindow()).isNull();
        BlockRemoved removed = (BlockRemoved) batch.events().get(1);
        assertThat(removed.getBlockHashes()).containsExactly(ByteBuffer.wrap(digest(2)));
        assertThat(removed.getMedium()).isNull();
        assertThat(batch.events().get(2)).isInstanceOf(AllBlocksCleared.class);
    }

    @Test
    void olderReleasesLeaveOutTrailingFieldsAndTheRank() throws Exception {
        byte[] payload = pack(p -> {
            p.packArrayHeader(2);              // [ts, events]: no data_parallel_rank yet
            p.packInt(100);                    // an integer ts is accepted too
            p.packArrayHeader(2);
            p.packArrayHeader(7);              // BlockStored up to medium (vLLM 0.9: ..., lora_id, medium)
            p.packString("BlockStored");
            p.packArrayHeader(1);
            p.packLong(-5);                    // Python hash(): signed
            p.packNil();                       // no parent
            p.packArrayHeader(1);
            p.packInt(9);
            p.packInt(1);
            p.packNil();
            p.packNil();
            p.packArrayHeader(3);              // BlockRemoved up to medium
            p.packString("BlockRemoved");
            p.packArrayHeader(1);
            p.packLong(-5);
            p.packString("GPU");
        });

        KvEventDecoder.DecodedBatch batch = decoder.decode(payload);

        assertThat(batch.tsMs()).isEqualTo(100_000);
        assertThat(batch.dataParallelRank()).isNull();
        BlockStored stored = (BlockStored) batch.events().get(0);
        assertThat(stored.getBlockHashes()).containsExactly(BlockHashes.ofUnsigned64(-5L));
        assertThat(stored.getParentBlockHash()).isNull();
        assertThat(stored.getMedium()).isNull();
        assertThat(stored.getLoraName()).isNull();
        assertThat(stored.getGroupIdx()).isZero();
        assertThat(((BlockRemoved) batch.events().get(1)).getMedium()).isEqualTo("GPU");
        assertThat(((BlockRemoved) batch.events().get(1)).getGroupIdx()).isZero();
    }

    @Test
    void theEncoderWritesWhatTheDecoderReadsInEveryEncoding() throws Exception {
        List<Long> hashes = VllmEventEncoder.hashes(1, 3);
        assertThat(hashes).anyMatch(h -> h < 0); // includes values at 2^63 and above
        for (VllmEventEncoder.Encoding encoding : VllmEventEncoder.Encoding.values()) {
            for (boolean asMap : new boolean[] {false, true}) {
                byte[] payload = VllmEventEncoder.batch(2.0, List.of(
                        VllmEventEncoder.blockStored(hashes, null, new int[] {1, 2, 3}, 1, null, "GPU", "l", List.of("k"), 2, null, null).first(8),
                        VllmEventEncoder.blockRemoved(List.of(digest(3)), null, null).first(1),
                        VllmEventEncoder.allBlocksCleared()), 1, encoding, asMap);
                KvEventDecoder.DecodedBatch batch = decoder.decode(payload);
                BlockStored stored = (BlockStored) batch.events().get(0);
                assertThat(stored.getBlockHashes()).as(encoding + " map=" + asMap)
                        .containsExactlyElementsOf(hashes.stream().map(BlockHashes::ofUnsigned64).toList());
                assertThat(stored.getExtraKeys()).containsExactly("k");
                assertThat(stored.getGroupIdx()).isZero(); // left out by first(8)
                assertThat(((BlockRemoved) batch.events().get(1)).getBlockHashes()).containsExactly(ByteBuffer.wrap(digest(3)));
                assertThat(batch.dataParallelRank()).isEqualTo(1);
            }
        }
    }

    @Test
    void garbageIsRejectedWithAReasonThatSaysWhatIsWrong() throws Exception {
        assertReason(new byte[0], "empty payload");
        assertReason(new byte[] {(byte) 0xc1}, "not msgpack");
        assertReason(pack(p -> p.packArrayHeader(3)), "truncated");
        assertReason(pack(p -> p.packString("hello")), "payload is a msgpack string, not an event batch");
        assertReason(pack(p -> {
            p.packArrayHeader(2);
            p.packDouble(1.0);
            p.packArrayHeader(0);
            p.packInt(2);
        }), "1 trailing byte(s) after the event batch");
        assertReason(pack(p -> {
            p.packArrayHeader(3);
            p.packString("yesterday");
            p.packArrayHeader(0);
            p.packNil();
        }), "batch ts is a string");
        assertReason(pack(p -> {
            p.packArrayHeader(2);
            p.packDouble(1.0);
            p.packArrayHeader(1);
            p.packArrayHeader(2);
            p.packString("BlockEvicted");
            p.packNil();
        }), "event 0: unknown event type 'BlockEvicted'");
        assertReason(pack(p -> {
            p.packArrayHeader(2);
            p.packDouble(1.0);
            p.packArrayHeader(1);
            p.packArrayHeader(3);
            p.packString("BlockStored");
            p.packArrayHeader(0);
            p.packNil();
        }), "event 0: BlockStored lacks token_ids");
        assertReason(pack(p -> {
            p.packArrayHeader(2);
            p.packDouble(1.0);
            p.packArrayHeader(1);
            p.packArrayHeader(2);
            p.packString("BlockRemoved");
            p.packArrayHeader(1);
            bin(p, new byte[5]);
        }), "event 0: block_hashes has a 5-byte hash; expected 8 or 32 bytes");
        assertReason(pack(p -> {
            p.packMapHeader(1);
            p.packString("events");
            p.packArrayHeader(0);
        }), "lacks 'ts'");
        assertReason(pack(p -> {
            p.packArrayHeader(2);
            p.packDouble(1.0);
            p.packArrayHeader(1);
            p.packMapHeader(1);
            p.packString("block_hashes");
            p.packArrayHeader(0);
        }), "event map has no string 'type'");
    }

    /** Sizes a frame cannot hold and nesting past any real event: refused with a reason, never an Error. */
    @Test
    void hostileSizesAndNestingAreRefusedWithAReason() throws Exception {
        // A batch whose events array declares 2^31 - 1 elements in a frame of a dozen bytes.
        assertReason(pack(p -> {
            p.packArrayHeader(2);
            p.packDouble(1.0);
            p.packArrayHeader(Integer.MAX_VALUE);
        }), "batch events declares 2147483647 element(s), more than the 0 byte(s) left");
        // The same in a hash list and in token ids.
        assertReason(pack(p -> {
            p.packArrayHeader(2);
            p.packDouble(1.0);
            p.packArrayHeader(1);
            p.packArrayHeader(2);
            p.packString("BlockRemoved");
            p.packArrayHeader(Integer.MAX_VALUE);
        }), "block_hashes declares 2147483647 element(s)");
        assertReason(pack(p -> {
            p.packArrayHeader(2);
            p.packDouble(1.0);
            p.packArrayHeader(1);
            p.packMapHeader(Integer.MAX_VALUE);
        }), "event map declares 2147483647 entries");
        // extra_keys nested a hundred thousand arrays deep, and a map key nested as deep.
        byte[] deep = new byte[100_000];
        Arrays.fill(deep, (byte) 0x91); // fixarray of one element
        assertReason(pack(p -> {
            p.packArrayHeader(2);
            p.packDouble(1.0);
            p.packArrayHeader(1);
            p.packMapHeader(2);
            p.packString("type");
            p.packString("BlockStored");
            p.packString("extra_keys");
            p.writePayload(deep);
            p.packNil();
        }), "extra_keys nests deeper than 4 levels");
        assertReason(pack(p -> {
            p.packMapHeader(1);
            p.writePayload(deep);
            p.packNil();
            p.packInt(1);
        }), "lacks 'ts'");
    }

    private void assertReason(byte[] payload, String reason) {
        assertThatThrownBy(() -> decoder.decode(payload)).isInstanceOf(UndecodableFrameException.class).hasMessageContaining(reason);
    }
}
