package dev.kvrouter.jobs.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.offset;

import dev.kvrouter.common.AffinityCost;
import dev.kvrouter.jobs.policy.RequestOutcomes.Kind;
import org.junit.jupiter.api.Test;

/** The policy's arithmetic, against values worked out by hand. */
class PolicyMathTest {

    // Llama-3-8B-like: 32 layers, 8 KV heads of 128, bf16; 10 000 prefill tokens/s; 25 GB/s fabric; $3 / M input tokens.
    private final CostModel model = new CostModel(32, 8, 128, 2, 10_000, 25e9, 3.0);

    @Test
    void kvBytesFollowTheShape() {
        // 1 token = 32 x 2 x 8 x 128 x 2 = 131 072 bytes (128 KiB)
        assertThat(model.kvBytes(1)).isEqualTo(131_072);
        assertThat(model.kvBytes(1000)).isEqualTo(131_072_000);
    }

    @Test
    void theThreeOutcomesArePricedByHand() {
        // 8 000-token prompt, 6 000 cached: prefill 2 000 tokens = 200 ms; saves 6 000 x $3/M = $0.018
        CostModel.Estimate hit = model.hit(8_000, 6_000);
        assertThat(hit.prefillMs()).isCloseTo(200, offset(1e-9));
        assertThat(hit.savedUsd()).isCloseTo(0.018, offset(1e-12));
        // moving 6 000 tokens = 786 432 000 bytes at 25 GB/s = 31.457 ms, plus 200 ms prefill
        CostModel.Estimate transfer = model.transfer(8_000, 6_000);
        assertThat(transfer.transferMs()).isCloseTo(31.45728, offset(1e-6));
        assertThat(transfer.ttftContributionMs()).isCloseTo(231.45728, offset(1e-6));
        // cold: 8 000 tokens = 800 ms, nothing saved
        assertThat(model.cold(8_000).prefillMs()).isCloseTo(800, offset(1e-9));
        assertThat(model.cold(8_000).savedUsd()).isZero();
        // 31 ms to move vs 600 ms to recompute
        assertThat(model.transferPays(6_000)).isTrue();
        assertThat(new CostModel(32, 8, 128, 2, 10_000, 1e9, 3.0).transferPays(6_000))
                .as("at 1 GB/s moving takes 786 ms, recomputing 600 ms").isFalse();
    }

    @Test
    void disaggregatedServingPaysTheHandOffOnTheTtftPath() {
        // 8 000 tokens, 6 000 cached on the prefill engine: 200 ms prefill, then all 8 000 tokens'
        // KV (1 048 576 000 bytes) to the decode engine at 25 GB/s = 41.94304 ms before the first token
        CostModel.Estimate e = model.disaggregated(8_000, 6_000);
        assertThat(e.outcome()).isEqualTo(CostModel.Outcome.HIT);
        assertThat(e.prefillMs()).isCloseTo(200, offset(1e-9));
        assertThat(e.transferMs()).isCloseTo(41.94304, offset(1e-9));
        assertThat(e.ttftContributionMs()).isCloseTo(241.94304, offset(1e-9));
        assertThat(e.savedUsd()).isCloseTo(0.018, offset(1e-12));
        assertThat(model.disaggregated(8_000, 0).outcome()).isEqualTo(CostModel.Outcome.COLD);
    }

    @Test
    void aBadModelShapeIsRefused() {
        assertThatThrownBy(() -> new CostModel(0, 8, 128, 2, 1, 1, 0)).hasMessageContaining("layers 0");
    }

    @Test
    void outcomesAreClassifiedFromDecisionAndOutcome() {
        // 16-token blocks
        assertThat(RequestOutcomes.classify(4, 64, 0, 16)).isEqualTo(new RequestOutcomes.Classified(Kind.HIT, true, false, 4));
        assertThat(RequestOutcomes.classify(4, 32, 0, 16)).as("found 2 of the 4 predicted")
                .isEqualTo(new RequestOutcomes.Classified(Kind.HIT, true, true, 2));
        assertThat(RequestOutcomes.classify(4, 15, 0, 16)).as("less than a block is no hit, and stale")
                .isEqualTo(new RequestOutcomes.Classified(Kind.COLD, true, true, 0));
        assertThat(RequestOutcomes.classify(0, 0, 512, 16)).isEqualTo(new RequestOutcomes.Classified(Kind.TRANSFER, false, false, 0));
        assertThat(RequestOutcomes.classify(0, 0, 0, 16)).isEqualTo(new RequestOutcomes.Classified(Kind.COLD, false, false, 0));
    }

    @Test
    void affinityPaysWhenThePrefillItSavedWeighedAsThePickWeighsItIsAtLeastTheWaitItAdded() {
        AffinityPayoff p = new AffinityPayoff(20, 3);
        // Few hits, each worth seconds of prefill: a 4 % hit rate that saves 120 ms a request against 30 ms of wait pays.
        assertThat(p.paid(new AffinityPayoff.Window(100, 120, 30))).contains(true);
        // A saturated fleet: holders' queues add 1.4 s against 0.9 s saved, within the 3 x the pick accepts: it pays.
        assertThat(p.paid(new AffinityPayoff.Window(100, 900, 1_400))).contains(true);
        // Predictions that did not hold (saved 10 ms where the pick expected more) while placements queued: it does not.
        assertThat(p.paid(new AffinityPayoff.Window(100, 10, 250))).contains(false);
        // A truly one-shot class: nothing to save, nothing added — the pick placed it by wait alone: nothing to say against it.
        assertThat(p.paid(new AffinityPayoff.Window(100, 0, 0))).contains(true);
        assertThat(p.paid(new AffinityPayoff.Window(19, 0, 500))).as("too few requests with a cost view to judge").isEmpty();
        assertThat(new AffinityPayoff(20, 1).paid(new AffinityPayoff.Window(100, 900, 1_400))).as("weighed 1:1").contains(false);
        assertThatThrownBy(() -> new AffinityPayoff(0, 3)).hasMessageContaining("minRequests");
        assertThatThrownBy(() -> new AffinityPayoff(1, 0)).hasMessageContaining("uncachedPrefillWeight");
    }

    @Test
    void aPlacementSavesWhatTheEngineReallyHadCached() {
        // 100 ms expected for 10 blocks; the engine had 5 of them (80 of 160 tokens): half of it.
        assertThat(AffinityCost.realizedSavingMs(100, 10, 80, 16, true)).isEqualTo(50.0);
        assertThat(AffinityCost.realizedSavingMs(100, 10, 320, 16, true)).as("never more than expected").isEqualTo(100.0);
        assertThat(AffinityCost.realizedSavingMs(100, 10, 0, 16, true)).as("stale: nothing").isZero();
        assertThat(AffinityCost.realizedSavingMs(100, 10, 160, 16, false)).as("failed: nothing").isZero();
        assertThat(AffinityCost.realizedSavingMs(40, 0, 0, 16, true)).as("a transfer, no block predicted: as predicted").isEqualTo(40.0);
        assertThat(AffinityCost.realizedSavingMs(-3, 10, 160, 16, true)).isZero();
    }

    @Test
    void latencyPercentilesAreWithinABucket() {
        LatencyHistogram h = new LatencyHistogram();
        for (int ms = 1; ms <= 100; ms++) {
            h.add(ms);
        }
        // true p50 = 50 ms, p99 = 99 ms; buckets are 2 % wide
        assertThat(h.quantileMs(0.5)).isBetween(50.0, 51.0);
        assertThat(h.quantileMs(0.99)).isBetween(99.0, 101.0);
        LatencyHistogram other = new LatencyHistogram();
        other.add(1000);
        h.merge(other);
        assertThat(h.total).isEqualTo(101);
        assertThat(h.quantileMs(1.0)).isBetween(1000.0, 1020.0);
        assertThat(new LatencyHistogram().quantileMs(0.5)).isNaN();
    }

    @Test
    void spaceSavingKeepsTheHeavyHittersInBoundedMemory() {
        PrefixPopularity p = new PrefixPopularity(3);
        for (int i = 0; i < 50; i++) {
            p.add(1); // a hot system prompt
        }
        for (int i = 0; i < 10; i++) {
            p.add(2); // a warm template
        }
        for (long oneShot = 100; oneShot < 108; oneShot++) {
            p.add(oneShot); // eight one-shot prompts fight over the third counter
        }
        assertThat(p.size()).isEqualTo(3);
        assertThat(p.count(1)).isEqualTo(50);
        assertThat(p.count(2)).isEqualTo(10);
        assertThat(p.count(107)).as("inherits the evicted count: an upper bound").isEqualTo(8);
        assertThat(p.guaranteedCount(107)).isEqualTo(1);
        assertThat(p.count(100)).as("evicted").isZero();
        assertThat(p.classify(1, 20, 5)).isEqualTo(PrefixPopularity.PrefixClass.HOT);
        assertThat(p.classify(2, 20, 5)).isEqualTo(PrefixPopularity.PrefixClass.WARM);
        assertThat(p.classify(107, 20, 5)).isEqualTo(PrefixPopularity.PrefixClass.ONE_SHOT);
        assertThat(p.classify(7, 20, 5)).as("never seen").isEqualTo(PrefixPopularity.PrefixClass.ONE_SHOT);
    }
}
