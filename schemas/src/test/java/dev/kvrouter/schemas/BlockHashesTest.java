package dev.kvrouter.schemas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class BlockHashesTest {

    @Test
    void unsignedHashesAbove2To63SurviveTheRoundTrip() {
        ByteBuffer b = BlockHashes.ofUnsigned64("18446744073709551615");
        assertThat(b.array()).containsOnly((byte) 0xff);
        assertThat(Long.toUnsignedString(BlockHashes.toUnsigned64(b))).isEqualTo("18446744073709551615");
        assertThat(Long.toUnsignedString(BlockHashes.toUnsigned64(BlockHashes.ofUnsigned64("9223372036854775808"))))
                .isEqualTo("9223372036854775808");
    }

    @Test
    void aDigestIsNotA64BitHash() {
        ByteBuffer digest = ByteBuffer.wrap(new byte[32]);
        assertThat(BlockHashes.isUnsigned64(digest)).isFalse();
        assertThatThrownBy(() -> BlockHashes.toUnsigned64(digest)).hasMessageContaining("8 bytes, this one 32");
    }
}
