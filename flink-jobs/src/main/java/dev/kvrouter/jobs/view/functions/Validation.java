package dev.kvrouter.jobs.view.functions;

import dev.kvrouter.common.ViewIds;
import dev.kvrouter.events.AllBlocksCleared;
import dev.kvrouter.events.BlockRemoved;
import dev.kvrouter.events.BlockStored;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.jobs.config.InputLimits;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;

/**
 * Bounds and semantic checks on decoded input. A record that fails goes to the dead-letter topic
 * with the first reason found; nothing downstream ever sees it.
 */
public final class Validation implements Serializable {

    private final int chunkTokens;
    private final int maxEvents;
    private final int maxHashes;
    private final int maxBlockSize;
    private final int maxString;

    public Validation(InputLimits limits, int chunkTokens) {
        this.chunkTokens = chunkTokens;
        this.maxEvents = limits.maxEventsPerBatch();
        this.maxHashes = limits.maxHashesPerEvent();
        this.maxBlockSize = limits.maxBlockSize();
        this.maxString = limits.maxStringLength();
    }

    public Optional<String> check(KvEventBatch b) {
        Optional<String> p = id("engine_id", b.getEngineId()).or(() -> id("model", b.getModel()));
        if (p.isPresent()) {
            return p;
        }
        if (b.getSeq() < 0) {
            return Optional.of("seq is negative (" + b.getSeq() + ")");
        }
        if (b.getDataParallelRank() != null && b.getDataParallelRank() < 0) {
            return Optional.of("data_parallel_rank is negative");
        }
        if (b.getEvents().size() > maxEvents) {
            return Optional.of(b.getEvents().size() + " events in one batch, more than the limit " + maxEvents);
        }
        for (int i = 0; i < b.getEvents().size(); i++) {
            Object e = b.getEvents().get(i);
            Optional<String> problem = e instanceof BlockStored s ? check(s)
                    : e instanceof BlockRemoved r ? hashes(r.getBlockHashes()).or(() -> optionalText("medium", r.getMedium()))
                    : e instanceof AllBlocksCleared ? Optional.empty()
                    : Optional.of("unknown event type " + e.getClass().getSimpleName());
            if (problem.isPresent()) {
                return Optional.of("event " + i + ": " + problem.get());
            }
        }
        return Optional.empty();
    }

    private Optional<String> check(BlockStored s) {
        Optional<String> p = hashes(s.getBlockHashes());
        if (p.isPresent()) {
            return p;
        }
        if (s.getParentBlockHash() != null && !validHash(s.getParentBlockHash())) {
            return Optional.of("parent_block_hash has " + s.getParentBlockHash().remaining() + " bytes, expected 8 or 32");
        }
        int size = s.getBlockSize();
        if (size < 1 || size > maxBlockSize) {
            return Optional.of("block_size " + size + " is outside 1.." + maxBlockSize);
        }
        if (chunkTokens % size != 0 && size % chunkTokens != 0) {
            return Optional.of("block_size " + size + " neither divides nor is a multiple of the canonical chunk of "
                    + chunkTokens + " tokens (view.chunk-tokens)");
        }
        long expected = (long) s.getBlockHashes().size() * size;
        if (s.getTokenIds().size() != expected) {
            return Optional.of("token_ids has " + s.getTokenIds().size() + " tokens, " + s.getBlockHashes().size()
                    + " blocks of " + size + " need " + expected);
        }
        for (Integer t : s.getTokenIds()) {
            if (t == null || t < 0) {
                return Optional.of("token id " + t + " is negative");
            }
        }
        if (s.getExtraKeys().size() > 64) {
            return Optional.of(s.getExtraKeys().size() + " extra keys, more than 64");
        }
        for (String k : s.getExtraKeys()) {
            if (k.length() > maxString) {
                return Optional.of("an extra key is longer than " + maxString);
            }
        }
        return optionalText("lora_name", s.getLoraName()).or(() -> optionalText("medium", s.getMedium()));
    }

    public Optional<String> check(EngineLoad l) {
        Optional<String> p = id("engine_id", l.getEngineId()).or(() -> id("model", l.getModel()));
        if (p.isPresent()) {
            return p;
        }
        if (l.getWaiting() < 0 || l.getRunning() < 0) {
            return Optional.of("waiting and running must not be negative (" + l.getWaiting() + ", " + l.getRunning() + ")");
        }
        if (l.getKvBlocksUsed() < 0 || l.getKvBlocksCapacity() < 0) {
            return Optional.of("KV block counts must not be negative");
        }
        if (l.getKvBlocksCapacity() > 0 && l.getKvBlocksUsed() > l.getKvBlocksCapacity()) {
            return Optional.of("kv_blocks_used " + l.getKvBlocksUsed() + " exceeds kv_blocks_capacity " + l.getKvBlocksCapacity());
        }
        if (l.getDataParallelRank() != null && l.getDataParallelRank() < 0) {
            return Optional.of("data_parallel_rank is negative");
        }
        return Optional.empty();
    }

    private Optional<String> hashes(List<ByteBuffer> hashes) {
        if (hashes.isEmpty()) {
            return Optional.of("no block hashes");
        }
        if (hashes.size() > maxHashes) {
            return Optional.of(hashes.size() + " block hashes, more than the limit " + maxHashes);
        }
        for (ByteBuffer h : hashes) {
            if (!validHash(h)) {
                return Optional.of("a block hash has " + h.remaining() + " bytes, expected 8 or 32");
            }
        }
        return Optional.empty();
    }

    private static boolean validHash(ByteBuffer h) {
        return h.remaining() == 8 || h.remaining() == 32;
    }

    private Optional<String> id(String name, String value) {
        return ViewIds.problem(name, value, maxString);
    }

    private Optional<String> optionalText(String name, String value) {
        return value != null && value.length() > maxString
                ? Optional.of(name + " is longer than " + maxString + " characters") : Optional.empty();
    }

    /** The 64-bit key of an engine hash: the value of an 8-byte hash, the first 8 bytes of a digest. */
    public static long engineHashKey(ByteBuffer hash) {
        return hash.getLong(hash.position());
    }
}
