package dev.kvrouter.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.events.AllBlocksCleared;
import dev.kvrouter.events.BlockRemoved;
import dev.kvrouter.events.BlockStored;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The decoder on KV event payloads assembled byte by byte from vLLM's struct definitions
 * (vllm-golden/kv-events, see its README), not by our encoder. The expected values are the fields
 * those structs declare, as each fixture's comments spell them out.
 */
class VllmGoldenKvEventsTest {

    /** The 16 token ids of the fixtures' one full block. */
    private static final List<Integer> BLOCK_TOKENS = List.of(128000, 791, 4062, 14198, 39935, 35308, 927, 279, 16053, 5679, 13, 578,
            4062, 14198, 39935, 35308);

    private final KvEventDecoder decoder = new KvEventDecoder();

    @Test
    void aGpuEnginesBatchDecodesToItsStoredRemovedAndClearedEvents() throws Exception {
        KvEventDecoder.DecodedBatch batch = decoder.decode(VllmGolden.hex("kv-events/gpu-batch.hex"));

        assertThat(batch.tsMs()).isEqualTo(1_754_551_234_125L);
        assertThat(batch.dataParallelRank()).isZero();
        assertThat(batch.events()).hasSize(3);
        BlockStored stored = (BlockStored) batch.events().get(0);
        assertThat(stored.getBlockHashes()).containsExactly(hash("834ab12f98a3dcb0"));
        assertThat(stored.getParentBlockHash()).isNull();
        assertThat(stored.getTokenIds()).containsExactlyElementsOf(BLOCK_TOKENS);
        assertThat(stored.getBlockSize()).isEqualTo(16);
        assertThat(stored.getMedium()).isEqualTo("GPU");
        assertThat(stored.getLoraName()).isNull();
        // Fields left at their default (omitted on the wire) read as the schema's defaults.
        assertThat(stored.getExtraKeys()).isEmpty();
        assertThat(stored.getGroupIdx()).isZero();
        assertThat(stored.getKvCacheSpecKind()).isNull();
        assertThat(stored.getKvCacheSpecSlidingWindow()).isNull();
        BlockRemoved removed = (BlockRemoved) batch.events().get(1);
        assertThat(removed.getBlockHashes()).containsExactly(hash("bf17ef8473ec96e9"));
        assertThat(removed.getMedium()).isEqualTo("GPU");
        assertThat(removed.getGroupIdx()).isZero();
        assertThat(batch.events().get(2)).isEqualTo(AllBlocksCleared.newBuilder().setMedium(null).build());
    }

    @Test
    void everyFieldWithADefaultIsReadWhenSet() throws Exception {
        KvEventDecoder.DecodedBatch batch = decoder.decode(VllmGolden.hex("kv-events/every-field.hex"));

        assertThat(batch.tsMs()).isEqualTo(1_754_551_299_500L);
        assertThat(batch.dataParallelRank()).isEqualTo(1);
        BlockStored stored = (BlockStored) batch.events().get(0);
        assertThat(stored.getBlockHashes()).containsExactly(hash("834ab12f98a3dcb0"), hash("30e2acea3be39f57"));
        assertThat(stored.getParentBlockHash()).isEqualTo(hash("0b34588037d4ff0c"));
        assertThat(stored.getTokenIds()).containsExactly(1, 2, 3, 4, 5, 6, 7, 8);
        assertThat(stored.getBlockSize()).isEqualTo(4);
        assertThat(stored.getMedium()).isEqualTo("GPU");
        assertThat(stored.getLoraName()).isEqualTo("sql-lora");
        // One tuple per block, flattened in engine order (the schema keeps a flat list).
        assertThat(stored.getExtraKeys()).containsExactly("sql-lora", "s4lt", "sql-lora");
        assertThat(stored.getGroupIdx()).isEqualTo(1);
        assertThat(stored.getKvCacheSpecKind()).isEqualTo("sliding_window");
        assertThat(stored.getKvCacheSpecSlidingWindow()).isEqualTo(4096);
        BlockRemoved removed = (BlockRemoved) batch.events().get(1);
        assertThat(removed.getBlockHashes()).containsExactly(hash("834ab12f98a3dcb0"));
        assertThat(removed.getMedium()).isEqualTo("CPU");
        assertThat(removed.getGroupIdx()).isEqualTo(1);
    }

    @Test
    void rawDigestHashesAreKeptWhole() throws Exception {
        KvEventDecoder.DecodedBatch batch = decoder.decode(VllmGolden.hex("kv-events/bytes-hashes.hex"));

        ByteBuffer block = hash("89a1a98e709fa672374b463bbd8d5946ff4f530c5e65be07bf17ef8473ec96e9");
        BlockStored stored = (BlockStored) batch.events().get(0);
        assertThat(stored.getBlockHashes()).containsExactly(block);
        assertThat(stored.getParentBlockHash()).isEqualTo(hash("b8c6f33f1780d30977c5e964f62e7959102a3694f1c28ae0834ab12f98a3dcb0"));
        assertThat(stored.getTokenIds()).containsExactly(1, 2, 3, 4);
        assertThat(((BlockRemoved) batch.events().get(1)).getBlockHashes()).containsExactly(block);
    }

    @Test
    void theFirstReleasesArrayLikeEncodingStillDecodes() throws Exception {
        KvEventDecoder.DecodedBatch batch = decoder.decode(VllmGolden.hex("kv-events/array-like-b4e69e0.hex"));

        assertThat(batch.tsMs()).isEqualTo(1_716_500_000_250L);
        assertThat(batch.dataParallelRank()).as("that release had no data_parallel_rank").isNull();
        BlockStored stored = (BlockStored) batch.events().get(0);
        assertThat(stored.getBlockHashes()).containsExactly(hash("834ab12f98a3dcb0"));
        assertThat(stored.getParentBlockHash()).isNull();
        assertThat(stored.getTokenIds()).containsExactlyElementsOf(BLOCK_TOKENS);
        assertThat(stored.getBlockSize()).isEqualTo(16);
        assertThat(stored.getMedium()).as("no medium before it was added").isNull();
        BlockRemoved removed = (BlockRemoved) batch.events().get(1);
        assertThat(removed.getBlockHashes()).containsExactly(hash("834ab12f98a3dcb0"));
        assertThat(removed.getMedium()).isNull();
        assertThat(batch.events().get(2)).isInstanceOf(AllBlocksCleared.class);
    }

    /** A hash as the schema holds it: an unsigned 64-bit one as its 8 bytes big-endian, a digest as it is. */
    private static ByteBuffer hash(String hex) {
        return ByteBuffer.wrap(HexFormat.of().parseHex(hex));
    }
}
