package dev.kvrouter.blocks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import net.jpountz.xxhash.XXHashFactory;
import org.junit.jupiter.api.Test;

class CanonicalBlockHasherTest {

    @Test
    void xxh64MatchesThePublishedVectors() {
        assertThat(xxh("")).isEqualTo(0xEF46DB3751D8E999L);
        assertThat(xxh("a")).isEqualTo(0xD24EC4F1A98C6E5BL);
        assertThat(xxh("abc")).isEqualTo(0x44BC2CF5AD770999L);
    }

    @Test
    void xxh64MatchesLz4JavaOnEveryLengthAndSeed() {
        var reference = XXHashFactory.safeInstance().hash64();
        Random random = new Random(7);
        for (int len = 0; len < 300; len++) {
            byte[] data = new byte[len + 3];
            random.nextBytes(data);
            long seed = random.nextLong();
            assertThat(XxHash64.hash(data, 3, len, seed)).as("length %d", len).isEqualTo(reference.hash(data, 3, len, seed));
        }
    }

    /** The vectors of docs/canonical-block-hash.md: other languages' implementations check against these. */
    @Test
    void documentedTestVectors() {
        CanonicalBlockHasher h = new CanonicalBlockHasher(4);
        int[] tokens = {1, 2, 3, 4, 5, 6, 7, 8, 9};
        long root = h.root("m", null);
        long[] chain = h.chain("m", null, tokens, List.of());
        assertThat(chain).hasSize(2);
        assertThat(chain[0]).isEqualTo(h.next(root, tokens, 0, List.of()));
        assertThat(chain[1]).isEqualTo(h.next(chain[0], tokens, 4, List.of()));
        assertThat(hex(root)).isEqualTo(VECTOR_ROOT);
        assertThat(hex(chain[0])).isEqualTo(VECTOR_CHUNK_0);
        assertThat(hex(chain[1])).isEqualTo(VECTOR_CHUNK_1);
        assertThat(hex(h.chain("m", "lora-a", tokens, List.of())[0])).isEqualTo(VECTOR_LORA_CHUNK_0);
        assertThat(hex(h.chain("m", null, tokens, List.of("img:1f"))[0])).isEqualTo(VECTOR_EXTRA_CHUNK_0);
    }

    // Printed by docs/canonical_block_hash.py, an independent implementation from the spec's text.
    static final String VECTOR_ROOT = "1a3c92c5c49b7d9f";
    static final String VECTOR_CHUNK_0 = "d9809f839fb75355";
    static final String VECTOR_CHUNK_1 = "894ff30f2ca485c7";
    static final String VECTOR_LORA_CHUNK_0 = "dedacdd71a1a4a75";
    static final String VECTOR_EXTRA_CHUNK_0 = "1f09c9c20d4f1127";

    @Test
    void aSharedPrefixGivesSharedHashesAndTheFirstDifferenceChangesEverythingAfter() {
        CanonicalBlockHasher h = new CanonicalBlockHasher(16);
        int[] a = IntStream.range(0, 64).toArray();
        int[] b = a.clone();
        b[40] = 999;
        long[] ha = h.chain("m", null, a, List.of());
        long[] hb = h.chain("m", null, b, List.of());
        assertThat(ha).hasSize(4);
        assertThat(hb[0]).isEqualTo(ha[0]);
        assertThat(hb[1]).isEqualTo(ha[1]);
        assertThat(hb[2]).isNotEqualTo(ha[2]);
        assertThat(hb[3]).isNotEqualTo(ha[3]);
    }

    @Test
    void modelLoraAndExtraKeysSeparateIdenticalTokens() {
        CanonicalBlockHasher h = new CanonicalBlockHasher(16);
        int[] t = IntStream.range(0, 16).toArray();
        long base = h.chain("m", null, t, List.of())[0];
        assertThat(h.chain("other", null, t, List.of())[0]).isNotEqualTo(base);
        assertThat(h.chain("m", "lora", t, List.of())[0]).isNotEqualTo(base);
        assertThat(h.chain("m", null, t, List.of("salt"))[0]).isNotEqualTo(base);
        assertThat(h.chain("m", "", t, List.of())[0]).as("no LoRA and an empty name are the same").isEqualTo(base);
    }

    @Test
    void aPartialChunkHasNoHash() {
        CanonicalBlockHasher h = new CanonicalBlockHasher(16);
        assertThat(h.chain("m", null, new int[15], List.of())).isEmpty();
        assertThat(h.chain("m", null, new int[31], List.of())).hasSize(1);
        assertThatThrownBy(() -> h.next(0, new int[10], 0, List.of())).hasMessageContaining("needs 16 tokens");
        assertThatThrownBy(() -> new CanonicalBlockHasher(0)).hasMessageContaining("at least 1 token");
    }

    private static long xxh(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return XxHash64.hash(b, 0, b.length, 0);
    }

    static String hex(long v) {
        return String.format("%016x", v);
    }
}
