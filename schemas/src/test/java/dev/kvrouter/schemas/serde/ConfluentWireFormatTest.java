package dev.kvrouter.schemas.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class ConfluentWireFormatTest {

    @Test
    void headerIsMagicZeroThenTheIdBigEndian() {
        assertThat(ConfluentWireFormat.header(0x01020304)).containsExactly(0, 1, 2, 3, 4);
    }

    @Test
    void readingTheHeaderLeavesTheBufferAtTheBody() {
        ByteBuffer buffer = ByteBuffer.wrap(new byte[] {0, 0, 0, 1, 44, 7, 8});
        assertThat(ConfluentWireFormat.readSchemaId(buffer)).isEqualTo(300);
        assertThat(buffer.remaining()).isEqualTo(2);
        assertThat(buffer.get()).isEqualTo((byte) 7);
    }

    @Test
    void aWrongFirstByteSaysWhatItWas() {
        ByteBuffer json = ByteBuffer.wrap("{\"a\":1}".getBytes());
        assertThatThrownBy(() -> ConfluentWireFormat.readSchemaId(json))
                .isInstanceOf(ConfluentWireFormat.MalformedWireFormatException.class)
                .hasMessageContaining("first byte is 0x7b, expected the magic byte 0x00");
    }

    @Test
    void tooFewBytesForTheHeader() {
        assertThatThrownBy(() -> ConfluentWireFormat.readSchemaId(ByteBuffer.wrap(new byte[] {0, 0, 1})))
                .hasMessageContaining("3 bytes, fewer than the 5-byte header");
    }
}
