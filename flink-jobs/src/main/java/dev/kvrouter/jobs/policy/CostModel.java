package dev.kvrouter.jobs.policy;

/**
 * The three outcomes of placing a request, priced (docs/architecture.md): a hit skips the cached
 * prefill; a miss with transfer moves the KV from its holder over the fabric; a cold start
 * recomputes everything.
 *
 * @param layers             transformer layers
 * @param kvHeads            KV heads per layer (after grouped-query attention)
 * @param headDim            dimension of one head
 * @param bytesPerElement    2 for fp16/bf16, 1 for fp8
 * @param prefillTokensPerS  prefill rate of one engine, tokens per second
 * @param fabricBytesPerS    bandwidth between engines for KV transfers, bytes per second
 * @param usdPerMillionInput price of a million input (prefill) tokens, US dollars
 */
public record CostModel(int layers, int kvHeads, int headDim, int bytesPerElement, double prefillTokensPerS,
                        double fabricBytesPerS, double usdPerMillionInput) {

    /** What one placement is expected to cost and save. */
    public record Estimate(Outcome outcome, double prefillMs, double transferMs, double savedUsd) {
        public double ttftContributionMs() {
            return prefillMs + transferMs;
        }
    }

    public enum Outcome { HIT, TRANSFER, COLD }

    public CostModel {
        if (layers < 1 || kvHeads < 1 || headDim < 1 || bytesPerElement < 1) {
            throw new IllegalArgumentException("model shape must be positive: layers " + layers + ", kv heads " + kvHeads
                    + ", head dim " + headDim + ", bytes per element " + bytesPerElement);
        }
        if (!(prefillTokensPerS > 0) || !(fabricBytesPerS > 0) || usdPerMillionInput < 0) {
            throw new IllegalArgumentException("prefill rate and fabric bandwidth must be positive, the price not negative");
        }
    }

    /** KV bytes of {@code tokens} tokens: tokens × layers × 2 (K and V) × KV heads × head dim × bytes per element. */
    public long kvBytes(long tokens) {
        return tokens * layers * 2L * kvHeads * headDim * bytesPerElement;
    }

    public double prefillMs(long tokens) {
        return tokens / prefillTokensPerS * 1000;
    }

    public double transferMs(long tokens) {
        return kvBytes(tokens) / fabricBytesPerS * 1000;
    }

    public double usd(long tokens) {
        return tokens * usdPerMillionInput / 1_000_000;
    }

    /** On the engine holding {@code cachedTokens} of the prompt: only the rest is prefilled. */
    public Estimate hit(long promptTokens, long cachedTokens) {
        return new Estimate(Outcome.HIT, prefillMs(promptTokens - cachedTokens), 0, usd(cachedTokens));
    }

    /** Elsewhere, with {@code movedTokens} of KV brought over the fabric instead of recomputed. */
    public Estimate transfer(long promptTokens, long movedTokens) {
        return new Estimate(Outcome.TRANSFER, prefillMs(promptTokens - movedTokens), transferMs(movedTokens), usd(movedTokens));
    }

    public Estimate cold(long promptTokens) {
        return new Estimate(Outcome.COLD, prefillMs(promptTokens), 0, 0);
    }

    /**
     * Disaggregated serving: a prefill pool computes what is not cached on the prefill engine, then
     * the whole prompt's KV moves to a decode engine before the first token: that hand-off is on the
     * TTFT path, whatever the prefix cache saved.
     */
    public Estimate disaggregated(long promptTokens, long cachedOnPrefillEngine) {
        long computed = promptTokens - cachedOnPrefillEngine;
        return new Estimate(cachedOnPrefillEngine > 0 ? Outcome.HIT : Outcome.COLD, prefillMs(computed), transferMs(promptTokens),
                usd(cachedOnPrefillEngine));
    }

    /** Moving KV pays when it is faster than recomputing it. */
    public boolean transferPays(long tokens) {
        return transferMs(tokens) < prefillMs(tokens);
    }
}
