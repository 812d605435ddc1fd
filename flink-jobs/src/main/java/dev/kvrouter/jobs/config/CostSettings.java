package dev.kvrouter.jobs.config;

import static dev.kvrouter.jobs.config.KvRouterJobOptions.*;

import dev.kvrouter.jobs.policy.CostModel;
import java.io.Serializable;

/** The model and fleet figures that price a placement: KV bytes per token, prefill rate, fabric bandwidth, input price. */
public record CostSettings(int layers, int kvHeads, int headDim, int bytesPerElement, double prefillTokensPerS, double fabricBytesPerS,
        double uncachedPrefillWeight, double usdPerMillionInput) implements Serializable {

    static CostSettings read(OptionReader r) {
        return new CostSettings(r.get(COST_LAYERS), r.get(COST_KV_HEADS), r.get(COST_HEAD_DIM), r.get(COST_BYTES_PER_ELEMENT),
                r.get(COST_PREFILL_TOKENS_PER_S), r.get(COST_FABRIC_BYTES_PER_S), r.get(COST_UNCACHED_PREFILL_WEIGHT),
                r.get(RATIOS_USD_PER_MILLION));
    }

    /** The cost model these figures describe. */
    public CostModel model() {
        return new CostModel(layers, kvHeads, headDim, bytesPerElement, prefillTokensPerS, fabricBytesPerS, usdPerMillionInput);
    }
}
