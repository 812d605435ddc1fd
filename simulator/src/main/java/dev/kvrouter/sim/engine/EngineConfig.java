package dev.kvrouter.sim.engine;

/**
 * One engine's shape and speed.
 *
 * @param blockTokens        tokens per KV block (vLLM's default 16)
 * @param capacityBlocks     KV cache capacity in blocks
 * @param prefillTokensPerS  prefill throughput of the engine, uncached prompt tokens per second
 *                           (prefills run one after another, as one compute-bound stream)
 * @param decodeTokensPerS   decode speed of one sequence, tokens per second
 * @param maxRunning         sequences run at once; the rest wait in FIFO order
 * @param heartbeatMs        interval of the engine's load reports
 * @param prefillChunkTokens a prefill runs in chunks of this many tokens, the blocks of each stored (cached for
 *                           others, and a {@code BlockStored} sent) as it completes, as vLLM's chunked prefill
 *                           does; 0: the whole prompt at once
 */
public record EngineConfig(String model, int blockTokens, int capacityBlocks, double prefillTokensPerS, double decodeTokensPerS,
                           int maxRunning, int heartbeatMs, boolean reportsSlots, int prefillChunkTokens) {

    public static final String DEFAULT_MODEL = "sim-llama-8b";

    /** vLLM's chunked-prefill budget per step for online serving on a large GPU ({@code max_num_batched_tokens}). */
    public static final int DEFAULT_PREFILL_CHUNK_TOKENS = 2_048;

    public EngineConfig {
        if (blockTokens < 1 || capacityBlocks < 1 || prefillTokensPerS <= 0 || decodeTokensPerS <= 0 || maxRunning < 1 || heartbeatMs < 1
                || prefillChunkTokens < 0) {
            throw new IllegalArgumentException("every engine figure must be positive: " + this);
        }
    }

    /** Without chunked prefill: the whole prompt's blocks stored when its prefill ends. */
    public EngineConfig(String model, int blockTokens, int capacityBlocks, double prefillTokensPerS, double decodeTokensPerS,
                        int maxRunning, int heartbeatMs, boolean reportsSlots) {
        this(model, blockTokens, capacityBlocks, prefillTokensPerS, decodeTokensPerS, maxRunning, heartbeatMs, reportsSlots, 0);
    }

    /**
     * An 8B model on one 80 GB GPU, roughly: 32,768 blocks of 16 tokens (512k tokens of KV),
     * 10,000 prefill tokens/s in chunks of 2,048, 30 decode tokens/s per sequence, 32 sequences at
     * once, 1 s heartbeats.
     */
    public static EngineConfig defaults() {
        return new EngineConfig(DEFAULT_MODEL, 16, 32_768, 10_000, 30, 32, 1_000, false, DEFAULT_PREFILL_CHUNK_TOKENS);
    }

    public EngineConfig withCapacity(int blocks) {
        return new EngineConfig(model, blockTokens, blocks, prefillTokensPerS, decodeTokensPerS, maxRunning, heartbeatMs, reportsSlots,
                prefillChunkTokens);
    }

    public EngineConfig withRates(double prefill, double decode) {
        return new EngineConfig(model, blockTokens, capacityBlocks, prefill, decode, maxRunning, heartbeatMs, reportsSlots,
                prefillChunkTokens);
    }

    public EngineConfig withMaxRunning(int n) {
        return new EngineConfig(model, blockTokens, capacityBlocks, prefillTokensPerS, decodeTokensPerS, n, heartbeatMs, reportsSlots,
                prefillChunkTokens);
    }

    public EngineConfig withHeartbeatMs(int ms) {
        return new EngineConfig(model, blockTokens, capacityBlocks, prefillTokensPerS, decodeTokensPerS, maxRunning, ms, reportsSlots,
                prefillChunkTokens);
    }

    /** Load reports carry the engine's slots ({@code max_running}), as an engine bridge configured with them does. */
    public EngineConfig withSlotsReported(boolean on) {
        return new EngineConfig(model, blockTokens, capacityBlocks, prefillTokensPerS, decodeTokensPerS, maxRunning, heartbeatMs, on,
                prefillChunkTokens);
    }

    /** Prefill in chunks of this many tokens (0: the whole prompt at once). */
    public EngineConfig withPrefillChunkTokens(int tokens) {
        return new EngineConfig(model, blockTokens, capacityBlocks, prefillTokensPerS, decodeTokensPerS, maxRunning, heartbeatMs, reportsSlots,
                tokens);
    }
}
