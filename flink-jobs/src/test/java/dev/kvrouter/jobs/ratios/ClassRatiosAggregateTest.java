package dev.kvrouter.jobs.ratios;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;

import dev.kvrouter.metrics.ClassRatios;
import org.junit.jupiter.api.Test;

class ClassRatiosAggregateTest {

    private final ClassRatiosAggregate aggregate = new ClassRatiosAggregate(16, 3.0);

    @Test
    void theFourRatiosByHand() {
        RatioAccumulator a = aggregate.createAccumulator();
        // e1: routed for 4 blocks, found 4 (hit, 64 tokens); routed for 4, found 2 (hit, 32, stale)
        aggregate.add(request("e1", 4, 64, 0, 100), a);
        aggregate.add(request("e1", 4, 32, 0, 200), a);
        // e2: routed for 2, found none (cold, stale); not routed for affinity, KV moved in (transfer)
        aggregate.add(request("e2", 2, 0, 0, 300), a);
        aggregate.add(request("e2", 0, 0, 512, 400), a);
        ClassRatios r = aggregate.getResult(a);
        assertThat(r.getRequests()).isEqualTo(4);
        assertThat(r.getAffinityHits()).isEqualTo(2);
        assertThat(r.getAffinityHitRate()).isEqualTo(0.5);
        assertThat(r.getAvoidedTokensPerHit()).isEqualTo(48.0); // (64 + 32) / 2
        assertThat(r.getAvoidedUsdPerHit()).isCloseTo(48 * 3.0 / 1e6, offset(1e-15));
        assertThat(r.getAffinityRouted()).isEqualTo(3);
        assertThat(r.getStale()).isEqualTo(2);
        assertThat(r.getStalenessRatio()).isCloseTo(2.0 / 3, offset(1e-12));
        assertThat(r.getLoadGini()).as("2 and 2 requests: even").isZero();
        assertThat(r.getTtftP50Ms()).isBetween(200.0, 204.0);
        assertThat(r.getTtftP99Ms()).isBetween(400.0, 408.0);
    }

    @Test
    void mergingTwoPartsEqualsCountingTheWhole() {
        RatioAccumulator left = aggregate.createAccumulator();
        RatioAccumulator right = aggregate.createAccumulator();
        RatioAccumulator whole = aggregate.createAccumulator();
        JoinedRequest[] rs = {request("e1", 4, 64, 0, 10), request("e1", 1, 0, 0, 20), request("e3", 0, 16, 0, 30)};
        aggregate.add(rs[0], left);
        aggregate.add(rs[1], right);
        aggregate.add(rs[2], right);
        for (JoinedRequest r : rs) {
            aggregate.add(r, whole);
        }
        assertThat(aggregate.getResult(aggregate.merge(left, right))).isEqualTo(aggregate.getResult(whole));
        // e1 has 2 of 3 requests, e3 one: sorted 1,2 -> 2*(1+4)/(2*3) - 3/2 = 1/6
        assertThat(aggregate.getResult(whole).getLoadGini()).isCloseTo(1.0 / 6, offset(1e-12));
    }

    @Test
    void anEmptyWindowHasNoRatesAndNoPercentiles() {
        ClassRatios r = aggregate.getResult(aggregate.createAccumulator());
        assertThat(r.getAffinityHitRate()).isZero();
        assertThat(r.getStalenessRatio()).isZero();
        assertThat(r.getTtftP50Ms()).isNull();
    }

    private static JoinedRequest request(String engine, int predicted, int cached, int transferred, double ttft) {
        JoinedRequest r = new JoinedRequest();
        r.engineId = engine;
        r.predictedCachedBlocks = predicted;
        r.cachedTokens = cached;
        r.transferredTokens = transferred;
        r.ttftMs = ttft;
        r.promptTokens = 1000;
        return r;
    }
}
