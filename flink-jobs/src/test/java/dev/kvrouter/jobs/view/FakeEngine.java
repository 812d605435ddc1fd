package dev.kvrouter.jobs.view;

import dev.kvrouter.events.AllBlocksCleared;
import dev.kvrouter.events.BlockRemoved;
import dev.kvrouter.events.BlockStored;
import dev.kvrouter.events.EngineLifecycle;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.schemas.BlockHashes;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * An engine as the pipeline sees one: KV event batches with sequence numbers and engine-specific
 * block hashes, and load reports. Engine hashes differ from the canonical ones on purpose.
 */
final class FakeEngine {

    static final String MODEL = "test-model";
    final String id;
    final int blockSize;
    private final long salt;
    long seq = 0;

    FakeEngine(String id, int blockSize) {
        this.id = id;
        this.blockSize = blockSize;
        this.salt = id.hashCode() * 0x9E3779B97F4A7C15L;
    }

    /** The engine's own hash of the block ending at token {@code end}: anything reproducible per engine. */
    long engineHash(int[] tokens, int end) {
        return Arrays.hashCode(Arrays.copyOf(tokens, end)) * 31L + salt;
    }

    /** BlockStored for blocks [fromBlock, toBlock) of the prompt. */
    BlockStored stored(int[] tokens, int fromBlock, int toBlock) {
        List<ByteBuffer> hashes = new ArrayList<>();
        List<Integer> ids = new ArrayList<>();
        for (int b = fromBlock; b < toBlock; b++) {
            hashes.add(BlockHashes.ofUnsigned64(engineHash(tokens, (b + 1) * blockSize)));
            for (int t = b * blockSize; t < (b + 1) * blockSize; t++) {
                ids.add(tokens[t]);
            }
        }
        return BlockStored.newBuilder().setBlockHashes(hashes)
                .setParentBlockHash(fromBlock == 0 ? null : BlockHashes.ofUnsigned64(engineHash(tokens, fromBlock * blockSize)))
                .setTokenIds(ids).setBlockSize(blockSize).setMedium("GPU").build();
    }

    BlockRemoved removed(int[] tokens, int fromBlock, int toBlock) {
        List<ByteBuffer> hashes = new ArrayList<>();
        for (int b = fromBlock; b < toBlock; b++) {
            hashes.add(BlockHashes.ofUnsigned64(engineHash(tokens, (b + 1) * blockSize)));
        }
        return BlockRemoved.newBuilder().setBlockHashes(hashes).build();
    }

    static AllBlocksCleared cleared() {
        return AllBlocksCleared.newBuilder().build();
    }

    KvEventBatch batch(Object... events) {
        return batchWithSeq(seq++, events);
    }

    KvEventBatch batchWithSeq(long sequence, Object... events) {
        return KvEventBatch.newBuilder().setEngineId(id).setModel(MODEL).setSeq(sequence)
                .setTsMs(System.currentTimeMillis()).setEvents(List.of(events)).build();
    }

    EngineLoad load(int waiting, int running) {
        return EngineLoad.newBuilder().setEngineId(id).setModel(MODEL).setTsMs(System.currentTimeMillis())
                .setWaiting(waiting).setRunning(running).setKvBlocksUsed(100).setKvBlocksCapacity(1000)
                .setLifecycle(EngineLifecycle.READY).build();
    }
}
