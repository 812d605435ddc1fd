package dev.kvrouter.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

class ViewLayoutTest {

    @Test
    void hashesAreSixteenUnsignedHexDigits() {
        long[] edges = {0, 1, 0xF, 0x10, Long.MAX_VALUE, Long.MIN_VALUE, -1};
        Random random = new Random(7);
        for (int i = 0; i < 10_000 + edges.length; i++) {
            long hash = i < edges.length ? edges[i] : random.nextLong() >>> random.nextInt(64);
            String hex = ViewLayout.hex(hash);
            assertThat(hex).as("%d", hash).hasSize(16).isEqualTo(String.format("%016x", hash));
            assertThat(ViewLayout.parseHex(hex)).isEqualTo(hash);
        }
    }

    @Test
    void holdersAreWrittenInBaseThirtySix() {
        long[] edges = {0, 1, 35, 36, Long.MAX_VALUE, -1, Long.MIN_VALUE};
        Random random = new Random(11);
        for (int i = 0; i < 10_000 + edges.length; i++) {
            long stored = i < edges.length ? edges[i] : random.nextLong() >>> random.nextInt(64);
            long epoch = random.nextInt(1_000_000);
            String expected = "engine-7=" + Long.toString(stored, 36) + "." + Long.toString(epoch, 36);
            assertThat(ViewLayout.holder("engine-7", stored, epoch)).isEqualTo(expected);
            assertThat(ViewLayout.appendHolder(new StringBuilder("a=1.1,"), "engine-7", stored, epoch).toString())
                    .isEqualTo("a=1.1," + expected);
        }
    }
}
