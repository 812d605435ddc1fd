package dev.kvrouter.jobs.view.functions;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.events.BlockRemoved;
import dev.kvrouter.events.BlockStored;
import dev.kvrouter.events.EngineLifecycle;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.jobs.view.TestConfigs;
import dev.kvrouter.schemas.BlockHashes;
import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class ValidationTest {

    private final Validation v = validation(TestConfigs.with("limits.max-hashes-per-event", "4"));

    private static Validation validation(KvRouterJobConfig config) {
        return new Validation(config.limits(), config.view().chunkTokens());
    }

    @Test
    void aWellFormedBatchPasses() {
        assertThat(v.check(batch(stored(2, 16, 32)))).isEmpty();
        assertThat(v.check(batch(stored(1, 32, 32)))).as("a block of two chunks").isEmpty();
        assertThat(v.check(batch(stored(4, 8, 32)))).as("two blocks per chunk").isEmpty();
    }

    @Test
    void eachProblemIsNamedWithItsEvent() {
        assertThat(v.check(batch(stored(2, 16, 31)))).contains("event 0: token_ids has 31 tokens, 2 blocks of 16 need 32");
        assertThat(v.check(batch(stored(1, 12, 12))))
                .contains("event 0: block_size 12 neither divides nor is a multiple of the canonical chunk of 16 tokens (view.chunk-tokens)");
        assertThat(v.check(batch(stored(5, 16, 80)))).contains("event 0: 5 block hashes, more than the limit 4");
        BlockRemoved badHash = BlockRemoved.newBuilder().setBlockHashes(List.of(ByteBuffer.wrap(new byte[7]))).build();
        assertThat(v.check(batch(stored(1, 16, 16), badHash))).contains("event 1: a block hash has 7 bytes, expected 8 or 32");
        KvEventBatch noEngine = batch();
        noEngine.setEngineId(" ");
        assertThat(v.check(noEngine)).contains("engine_id is missing");
        KvEventBatch separator = batch();
        separator.setEngineId("a=b");
        assertThat(v.check(separator)).contains("engine_id 'a=b' contains '=': ids may not contain , = | or control characters");
        KvEventBatch negative = batch();
        negative.setSeq(-1);
        assertThat(v.check(negative)).contains("seq is negative (-1)");
    }

    @Test
    void impossibleLoadReportsAreRejected() {
        EngineLoad l = EngineLoad.newBuilder().setEngineId("e").setModel("m").setTsMs(0).setWaiting(0).setRunning(0)
                .setKvBlocksUsed(11).setKvBlocksCapacity(10).setLifecycle(EngineLifecycle.READY).build();
        assertThat(v.check(l)).contains("kv_blocks_used 11 exceeds kv_blocks_capacity 10");
        l.setKvBlocksUsed(5);
        assertThat(v.check(l)).isEmpty();
        l.setWaiting(-1);
        assertThat(v.check(l)).contains("waiting and running must not be negative (-1, 0)");
    }

    private static KvEventBatch batch(Object... events) {
        return KvEventBatch.newBuilder().setEngineId("e").setModel("m").setSeq(0).setTsMs(0).setEvents(List.of(events)).build();
    }

    private static BlockStored stored(int blocks, int size, int tokens) {
        List<ByteBuffer> hashes = new java.util.ArrayList<>();
        for (int i = 0; i < blocks; i++) {
            hashes.add(BlockHashes.ofUnsigned64(i));
        }
        return BlockStored.newBuilder().setBlockHashes(hashes).setParentBlockHash(null)
                .setTokenIds(Collections.nCopies(tokens, 7)).setBlockSize(size).build();
    }
}
