package dev.kvrouter.sim.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.events.OutcomeStatus;
import dev.kvrouter.events.RouteReason;
import dev.kvrouter.sim.engine.Completion;
import dev.kvrouter.sim.engine.Placement;
import dev.kvrouter.sim.workload.Prompt;
import dev.kvrouter.sim.workload.SimRequest;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

class PolicyMetricsTest {

    private static Placement placement(String cls, double at, int predicted) {
        SimRequest r = new SimRequest(0, at, cls, "c", Prompt.of(new Prompt.Segment(1, 160)), 10);
        return new Placement("r", r, new long[10], "e0", predicted, predicted > 0 ? RouteReason.AFFINITY : RouteReason.COLD);
    }

    @Test
    void theFourRatiosPerClassAndOverall() {
        PolicyMetrics m = new PolicyMetrics("p", 2, 60_000);
        Placement a1 = placement("a", 0, 4);   // predicted 4, found 4: a hit, not stale
        Placement a2 = placement("a", 10, 6);  // predicted 6, found 2: a hit, stale
        Placement a3 = placement("a", 20, 0);  // not routed for affinity, cold
        Placement b1 = placement("b", 30, 0);  // fails
        m.arrived(a1, 0);
        m.arrived(a2, 0);
        m.arrived(a3, 1);
        m.arrived(b1, 1);
        m.completed(new Completion(a1, OutcomeStatus.OK, 10, 4, 64, 0, 100, 1_000));
        m.completed(new Completion(a2, OutcomeStatus.OK, 10, 2, 32, 0, 200, 1_000));
        m.completed(new Completion(a3, OutcomeStatus.OK, 10, 0, 0, 0, 300, 1_000));
        m.completed(new Completion(b1, OutcomeStatus.ERROR, 10, -1, 0, 0, 0, 1_000));
        m.sampleLoads(0, new double[] {1, 1});
        m.sampleLoads(1_000, new double[] {2, 0});

        PolicyMetrics.PolicyResult r = m.result(2.0);
        ClassStats.Summary a = r.perClass().get("a");
        assertThat(a.requests()).isEqualTo(3);
        assertThat(a.completed()).isEqualTo(3);
        assertThat(a.hitRate()).isCloseTo(2 / 3.0, Offset.offset(1e-12));
        assertThat(a.avoidedTokensPerHit()).isEqualTo(48);
        assertThat(a.avoidedUsdPerHit()).isCloseTo(48 * 2.0 / 1e6, Offset.offset(1e-15));
        assertThat(a.blockHitRate()).isCloseTo(6 / 30.0, Offset.offset(1e-12));
        assertThat(a.affinityRouted()).isEqualTo(2);
        assertThat(a.staleness()).isEqualTo(0.5);
        assertThat(a.ttftP50Ms()).isEqualTo(200);
        assertThat(a.ttftP99Ms()).isEqualTo(300);
        // Two placed on engine 0, one on engine 1: Gini of (2, 1) = 2·(1·1 + 2·2)/(2·3) − 3/2 = 1/6.
        assertThat(a.placementGini()).isCloseTo(1 / 6.0, Offset.offset(1e-12));
        // Load samples: Gini 0 then 1/2 (one of two engines has it all): mean 1/4.
        assertThat(r.overall().loadGini()).isCloseTo(0.25, Offset.offset(1e-12));
        assertThat(r.overall().failed()).isEqualTo(1);
        assertThat(r.perClass().get("b").hitRate()).isNaN();
        assertThat(r.series()).singleElement().satisfies(w -> {
            assertThat(w.completed()).isEqualTo(3);
            assertThat(w.staleness()).isEqualTo(0.5);
        });
    }

    @Test
    void nearestRankQuantiles() {
        Quantiles q = new Quantiles();
        assertThat(q.quantile(0.5)).isNaN();
        for (int i = 1; i <= 1_000; i++) {
            q.add(1_001 - i);
        }
        assertThat(q.quantile(0.5)).isEqualTo(500);
        assertThat(q.quantile(0.99)).isEqualTo(990);
        assertThat(q.quantile(1.0)).isEqualTo(1_000);
        assertThat(q.quantile(0.0)).isEqualTo(1);
    }
}
