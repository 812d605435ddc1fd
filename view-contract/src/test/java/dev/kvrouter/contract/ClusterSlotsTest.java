package dev.kvrouter.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ClusterSlotsTest {

    @Test
    void crc16IsRedisClusters() {
        // Redis Cluster specification: CRC16 of "123456789" is 0x31C3.
        assertThat(ClusterSlots.crc16("123456789".getBytes())).isEqualTo(0x31C3);
        assertThat(ClusterSlots.slot("foo")).isEqualTo(12182); // CLUSTER KEYSLOT foo
    }

    @Test
    void onlyANonEmptyHashTagCounts() {
        assertThat(ClusterSlots.slot("a{user1000}.following")).isEqualTo(ClusterSlots.slot("user1000"));
        assertThat(ClusterSlots.slot("foo{}{bar}")).isEqualTo(ClusterSlots.slot("foo{}{bar}"));
        assertThat(ClusterSlots.slot("kvr:g:{00000000000000ff}")).isEqualTo(ClusterSlots.slot("00000000000000ff"));
    }

    @Test
    void aHotRootPutsEveryLookupOfDepthOneInOneSlotAndDepthTwoSpreadsThem() throws Exception {
        Path trace = Files.createTempFile("trace", ".jsonl");
        StringBuilder lines = new StringBuilder();
        for (int r = 0; r < 200; r++) {
            lines.append("{\"hash_ids\": [0, ").append(1000 + r).append(", ").append(5000 + r).append("]}\n");
        }
        Files.writeString(trace, lines);
        SlotSpread.Result one = SlotSpread.measure(trace, 1, Integer.MAX_VALUE);
        SlotSpread.Result two = SlotSpread.measure(trace, 2, Integer.MAX_VALUE);
        assertThat(one.busiestLookupShare()).as("every pick reads the root's group").isEqualTo(1.0);
        // Depth 2: every pick reads the hot root's group and its own: the root's slot takes half.
        assertThat(two.busiestLookupShare()).isEqualTo(0.5);
        assertThat(two.busiestBlockShare()).isLessThan(0.05);
        assertThat(one.blocks()).isEqualTo(401);
    }
}
