package dev.kvrouter.sim.policy;

import static dev.kvrouter.sim.policy.FakeFleet.request;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.events.RouteReason;
import org.junit.jupiter.api.Test;

class PoliciesTest {

    @Test
    void roundRobinTakesEachLiveEngineInTurn() {
        FakeFleet fleet = new FakeFleet(0, 0, 0);
        fleet.alive[1] = false;
        RoundRobinPolicy p = new RoundRobinPolicy();
        assertThat(new int[] {p.route(request(1), fleet).engine(), p.route(request(1), fleet).engine(), p.route(request(1), fleet).engine()})
                .containsExactly(0, 2, 0);
    }

    @Test
    void leastLoadedTakesTheFewestRequestsLowestIndexOnTies() {
        assertThat(new LeastLoadedPolicy().route(request(1), new FakeFleet(3, 1, 1)).engine()).isEqualTo(1);
        FakeFleet fleet = new FakeFleet(3, 1, 0);
        fleet.alive[2] = false;
        assertThat(new LeastLoadedPolicy().route(request(1), fleet).engine()).isEqualTo(1);
    }

    @Test
    void consistentHashKeepsAPrefixOnOneEngineWhateverTheLoadAndMovesOnlyWhenItDies() {
        ConsistentHashPolicy p = new ConsistentHashPolicy(1);
        FakeFleet fleet = new FakeFleet(0, 0, 0, 0);
        int home = p.route(request(42, 1), fleet).engine();
        fleet.loads[home] = 1_000;
        assertThat(p.route(request(42, 2, 3), fleet).engine()).isEqualTo(home);
        assertThat(p.route(request(42), fleet).reason()).isEqualTo(RouteReason.AFFINITY);
        fleet.alive[home] = false;
        int moved = p.route(request(42, 1), fleet).engine();
        assertThat(moved).isNotEqualTo(home);
        // Other prefixes spread: 200 first blocks land on every engine.
        FakeFleet even = new FakeFleet(0, 0, 0, 0);
        java.util.Set<Integer> used = new java.util.HashSet<>();
        for (long k = 0; k < 200; k++) {
            used.add(p.route(request(k), even).engine());
        }
        assertThat(used).containsExactlyInAnyOrder(0, 1, 2, 3);
    }

    @Test
    void sglangGoesToTheShortestQueueWhenImbalancedAbsolutelyAndRelatively() {
        SglangCacheAwarePolicy p = SglangCacheAwarePolicy.defaults(1_000);
        FakeFleet fleet = new FakeFleet(10, 10, 10);
        assertThat(p.route(request(1, 2, 3, 4), fleet).engine()).isEqualTo(0); // cold: least loaded; learns 1..4 on 0
        Route again = p.route(request(1, 2, 3, 9), fleet);
        assertThat(again.engine()).isZero();
        assertThat(again.reason()).isEqualTo(RouteReason.AFFINITY);
        assertThat(again.predictedBlocks()).isEqualTo(3);

        fleet.loads[0] = 80;                 // max − min = 70 > 64 and 80 > 1.5 × 10: imbalanced
        Route spill = p.route(request(1, 2, 3, 4), fleet);
        assertThat(spill.engine()).isEqualTo(1);
        assertThat(spill.reason()).isEqualTo(RouteReason.SPILL_BUSY);
        assertThat(spill.predictedBlocks()).isZero();

        fleet.loads[0] = 70;
        fleet.loads[1] = 50;
        fleet.loads[2] = 50;                 // 70 − 50 = 20 ≤ 64: balanced enough, affinity to the best match
        assertThat(p.route(request(1, 2, 3, 4), fleet).engine()).isIn(0, 1);
        SglangCacheAwarePolicy fresh = SglangCacheAwarePolicy.defaults(1_000);
        fresh.route(request(1, 2, 3, 4), new FakeFleet(0, 5, 5));
        FakeFleet relative = new FakeFleet(300, 200, 250); // 100 > 64 but 300 < 1.5 × 200: not imbalanced
        assertThat(fresh.route(request(1, 2, 3, 4), relative).engine()).isZero();
    }

    @Test
    void sglangNeedsAMatchRateAboveThreshold() {
        SglangCacheAwarePolicy p = SglangCacheAwarePolicy.defaults(1_000);
        p.route(request(1, 2, 3), new FakeFleet(0, 5, 5)); // learned on engine 0
        FakeFleet fleet = new FakeFleet(3, 0, 0);
        // 1 of 4 blocks = 0.25 ≤ 0.3: least loaded, not affinity.
        Route low = p.route(request(1, 7, 8, 9), fleet);
        assertThat(low.engine()).isEqualTo(1);
        assertThat(low.reason()).isEqualTo(RouteReason.COLD);
        // 2 of 4 = 0.5: affinity to engine 0 though it is busier.
        Route high = p.route(request(1, 2, 8, 9), fleet);
        assertThat(high.engine()).isZero();
        assertThat(high.predictedBlocks()).isEqualTo(2);
    }

    @Test
    void aibrixTakesTheBestMatchAmongEnginesUnderMeanPlusTwoSigma() {
        AibrixPrefixCachePolicy p = new AibrixPrefixCachePolicy(0, 2.0, 1_000);
        p.route(request(1, 2, 3), new FakeFleet(0, 1, 1, 1, 1, 1, 1, 1)); // learned on engine 0
        FakeFleet zeroDown = new FakeFleet(1, 0, 1, 1, 1, 1, 1, 1);
        zeroDown.alive[0] = false;
        assertThat(p.route(request(1, 2), zeroDown).engine()).isEqualTo(1); // and 1, 2 on engine 1
        // Loads 20, 2, 2, 2, 2, 2, 2, 2: mean 4.25, σ ≈ 5.95, limit ≈ 16.2: engine 0 is out.
        Route r = p.route(request(1, 2, 3), new FakeFleet(20, 2, 2, 2, 2, 2, 2, 2));
        assertThat(r.engine()).isEqualTo(1);
        assertThat(r.predictedBlocks()).isEqualTo(2);
        assertThat(r.reason()).isEqualTo(RouteReason.AFFINITY);
        // One engine above all others is always out (limit = 2 + 0.79 × its excess); loads 3, 3, 3, 3,
        // 2, 2, 2, 2: mean 2.5, σ 0.5, limit 3.5: engine 0 is in and its 3 blocks win.
        assertThat(p.route(request(1, 2, 3), new FakeFleet(3, 2, 2, 2, 2, 2, 2, 2)).engine()).isEqualTo(1);
        assertThat(p.route(request(1, 2, 3), new FakeFleet(3, 3, 3, 3, 2, 2, 2, 2)).engine()).isZero();
        // No match anywhere: the least-loaded candidate, cold.
        Route cold = p.route(request(77), new FakeFleet(5, 4, 3, 3, 3, 3, 3, 3));
        assertThat(cold.engine()).isEqualTo(2);
        assertThat(cold.reason()).isEqualTo(RouteReason.COLD);
        // With AIBrix's imbalance check (max − min > 8), the least loaded whatever the match.
        AibrixPrefixCachePolicy guarded = new AibrixPrefixCachePolicy(8, 2.0, 1_000);
        guarded.route(request(1, 2, 3), new FakeFleet(0, 1));
        assertThat(guarded.route(request(1, 2, 3), new FakeFleet(10, 1)).reason()).isEqualTo(RouteReason.SPILL_BUSY);
    }

    @Test
    void oracleGoesWhereTheRequestCostsTheLeastTrueDelay() {
        // Delay = true wait + 3 × the uncached prefill (1 ms a block here). A 4-block prompt.
        OraclePolicy p = new OraclePolicy(3.0, 8);
        FakeFleet fleet = new FakeFleet(4, 4, 4, 4).holds(2, 1, 2, 3).holds(3, 1);
        assertThat(p.route(request(1, 2, 3, 4), fleet)).as("e2: 3 × 1 = 3 ms; e3: 9; the others 12")
                .isEqualTo(new Route(2, 3, RouteReason.AFFINITY, 3));

        // e2's queue holds a request back 20 ms: 23 ms there, 9 on e3, which holds the first block.
        fleet.waits(2, 20);
        assertThat(p.route(request(1, 2, 3, 4), fleet)).isEqualTo(new Route(3, 1, RouteReason.REPLICA, 3));

        // Only e2 holds it and it waits 20 ms: 23 against 12 anywhere else; ties to the lower load.
        FakeFleet only = new FakeFleet(4, 3, 4, 4).holds(2, 1, 2, 3).waits(2, 20);
        assertThat(p.route(request(1, 2, 3, 4), only)).isEqualTo(new Route(1, 0, RouteReason.SPILL_BUSY, 3));

        // Nobody holds it: the least loaded, cold; a dead holder does not count.
        FakeFleet dead = new FakeFleet(4, 3, 1, 4).holds(2, 1);
        dead.alive[2] = false;
        assertThat(p.route(request(1, 2), dead)).isEqualTo(new Route(1, 0, RouteReason.COLD, 0));
    }

    @Test
    void theOracleCopiesABurstsPromptToASpareEngineBeforeItsHoldersFillAndForgetsFinishedClients() {
        // 4 slots per engine; a client is a burst from 3 requests in flight. e0 holds the 4-block prompt.
        OraclePolicy p = new OraclePolicy(3.0, 3);
        FakeFleet fleet = new FakeFleet(1, 3, 0).holds(0, 1, 2, 3, 4);
        PolicyRequest burst = FakeFleet.request(1, 2, 3, 4);
        assertThat(p.route(burst, fleet)).as("1 in flight: no burst yet").isEqualTo(new Route(0, 4, RouteReason.AFFINITY, 4));
        assertThat(p.route(burst, fleet)).as("2 in flight: no burst yet").isEqualTo(new Route(0, 4, RouteReason.AFFINITY, 4));
        assertThat(p.route(burst, fleet)).as("a burst, but the holder has used 2 of its 4 slots with this one")
                .isEqualTo(new Route(0, 4, RouteReason.AFFINITY, 4));
        fleet.loads[0] = 2;
        // 3 of the holder's 4 slots with this one: a copy on e2 (every slot free; e1 has 1 of 4), not e1.
        assertThat(p.route(burst, fleet)).isEqualTo(new Route(2, 0, RouteReason.SPILL_HOT, 4));
        // While e2 computes it: no second copy.
        fleet.computing[2] = 4;
        assertThat(p.route(burst, fleet)).isEqualTo(new Route(0, 4, RouteReason.AFFINITY, 4));
        // Another client's request is no burst.
        fleet.computing[2] = 0;
        assertThat(p.route(new PolicyRequest("r", new long[] {1, 2, 3, 4}, "c", "calm", 64), fleet))
                .isEqualTo(new Route(0, 4, RouteReason.AFFINITY, 4));
        for (int i = 0; i < 6; i++) {
            p.finished(burst, 0);
        }
        p.finished(new PolicyRequest("r", new long[] {1, 2, 3, 4}, "c", "calm", 64), 0);
        assertThat(p.clientsInFlight()).as("every request finished: nothing kept").isZero();
        assertThat(p.route(burst, fleet)).as("1 in flight again").isEqualTo(new Route(0, 4, RouteReason.AFFINITY, 4));
    }

    @Test
    void theRoutedTableForgetsLeastRecentlyMatchedBlocksBeyondItsSize() {
        RoutedPrefixTable t = new RoutedPrefixTable(3);
        t.insert(new long[] {1, 2}, 0);
        t.insert(new long[] {1, 5}, 1);
        assertThat(t.match(new long[] {1, 2, 9}, 2)).containsExactly(2, 1);
        t.insert(new long[] {7}, 1); // 4 blocks > 3: the least recently touched (5) goes
        assertThat(t.size()).isEqualTo(3);
        assertThat(t.match(new long[] {1, 5}, 2)).containsExactly(1, 1);
    }
}
