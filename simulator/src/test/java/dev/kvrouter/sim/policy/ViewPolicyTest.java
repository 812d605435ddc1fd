package dev.kvrouter.sim.policy;

import static dev.kvrouter.sim.policy.FakeFleet.request;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.balancer.KvRouterClient;
import dev.kvrouter.balancer.PickPolicy;
import dev.kvrouter.events.RouteReason;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class ViewPolicyTest {

    private static KvRouterClient.Pick pick(String engine, int matched, String reason, int best) {
        return new KvRouterClient.Pick(engine, matched, reason, 10, 1.0, KvRouterClient.Source.VIEW, PickPolicy.Saving.NONE,
                PickPolicy.Handoff.NONE, best, "r");
    }

    /** A balancer that records what it was asked and answers with {@code answer}. */
    private static class Recording implements ViewPolicy.Balancer {
        final List<Object[]> picks = new ArrayList<>();
        final List<String> done = new ArrayList<>();
        final Function<long[], KvRouterClient.Pick> answer;

        Recording(Function<long[], KvRouterClient.Pick> answer) {
            this.answer = answer;
        }

        @Override
        public KvRouterClient.Pick pick(long[] chain, String prefixClass, String clientId, String requestId, Set<String> avoid) {
            picks.add(new Object[] {chain, prefixClass, clientId, requestId, avoid});
            return answer.apply(chain);
        }

        @Override
        public void done(String requestId) {
            done.add(requestId);
        }
    }

    @Test
    void passesTheChainClassClientAndRequestAndMapsTheAnswerOntoTheFleet() {
        Recording b = new Recording(c -> new KvRouterClient.Pick("e2", 3, "AFFINITY", 10, 1.0, KvRouterClient.Source.VIEW,
                new PickPolicy.Saving("HIT", 48, 0, 4.8, 12.5), PickPolicy.Handoff.NONE, 5, "r"));
        ViewPolicy p = new ViewPolicy(List.of(b));
        FakeFleet fleet = new FakeFleet(0, 0, 5);
        assertThat(p.route(request(1, 2, 3), fleet)).as("with the pick's cost view")
                .isEqualTo(new Route(2, 3, RouteReason.AFFINITY, 5, 4.8, 12.5));
        assertThat((long[]) b.picks.get(0)[0]).containsExactly(1, 2, 3);
        assertThat(b.picks.get(0)[1]).isEqualTo("c");
        assertThat(b.picks.get(0)[2]).isEqualTo("client");
        assertThat(b.picks.get(0)[3]).isEqualTo(request(1).requestId());
        p.finished(request(1, 2, 3), 2);
        assertThat(b.done).containsExactly(request(1).requestId());
    }

    @Test
    void requestsAreDealtAmongTheBalancersAndEachReportsItsOwnDone() {
        List<Recording> balancers = List.of(new Recording(c -> pick("e0", 0, "COLD", 0)), new Recording(c -> pick("e0", 0, "COLD", 0)),
                new Recording(c -> pick("e0", 0, "COLD", 0)), new Recording(c -> pick("e0", 0, "COLD", 0)));
        ViewPolicy p = new ViewPolicy(new ArrayList<>(balancers));
        FakeFleet fleet = new FakeFleet(0, 0, 5);
        for (int i = 0; i < 200; i++) {
            PolicyRequest r = new PolicyRequest("req-" + i, new long[] {i}, null, null, 16);
            p.route(r, fleet);
            p.finished(r, 0);
        }
        Set<Object> asked = new HashSet<>();
        for (Recording b : balancers) {
            assertThat(b.picks).as("every balancer takes a share").hasSizeBetween(20, 90);
            List<Object> ids = b.picks.stream().map(x -> x[3]).toList();
            assertThat(b.done).as("the balancer that placed a request reports it done").containsExactlyElementsOf(ids.stream().map(String.class::cast).toList());
            asked.addAll(ids);
        }
        assertThat(asked).hasSize(200);
    }

    @Test
    void aPickOfADeadEngineIsAskedAgainWithoutIt() {
        FakeFleet fleet = new FakeFleet(4, 1, 5);
        fleet.alive[2] = false;
        Recording b = new Recording(c -> pick("e2", 4, "AFFINITY", 4)) {
            @Override
            public KvRouterClient.Pick pick(long[] chain, String prefixClass, String clientId, String requestId, Set<String> avoid) {
                super.pick(chain, prefixClass, clientId, requestId, avoid);
                return avoid.contains("e2") ? ViewPolicyTest.pick("e0", 3, "REPLICA", 4) : ViewPolicyTest.pick("e2", 4, "AFFINITY", 4);
            }
        };
        assertThat(new ViewPolicy(List.of(b)).route(request(1), fleet)).isEqualTo(new Route(0, 3, RouteReason.REPLICA, 4, 0.0, 0.0));
        assertThat(b.picks).hasSize(2);
        assertThat(b.picks.get(1)[3]).as("the same request id: the reservation moves").isEqualTo(b.picks.get(0)[3]);
    }

    @Test
    void anUnknownOrDeadEngineFallsBackToLeastLoaded() {
        FakeFleet fleet = new FakeFleet(4, 1, 5);
        assertThat(new ViewPolicy(List.of(new Recording(c -> pick("", 0, "NO_VIEW", 0)))).route(request(1), fleet))
                .isEqualTo(new Route(1, 0, RouteReason.FALLBACK_LOAD_ONLY));
        fleet.alive[2] = false;
        Recording stubborn = new Recording(c -> pick("e2", 4, "AFFINITY", 4));
        assertThat(new ViewPolicy(List.of(stubborn)).route(request(1), fleet).engine()).isEqualTo(1);
        assertThat(stubborn.picks).as("asked again without the dead engine before falling back").hasSize(1 + ViewPolicy.MAX_RETRIES);
        assertThat(stubborn.picks.get(1)[4]).isEqualTo(Set.of("e2"));
        assertThat(ViewPolicy.reason("SPILL_CLIENT_CAP")).isEqualTo(RouteReason.SPILL_CLIENT_CAP);
        assertThat(ViewPolicy.reason("NO_VIEW")).isEqualTo(RouteReason.FALLBACK_LOAD_ONLY);
        assertThat(ViewPolicy.reason("SPILL_SLOTS")).as("a finer reason: its family").isEqualTo(RouteReason.SPILL_BUSY);
        assertThat(ViewPolicy.reason("BURST_COPY")).isEqualTo(RouteReason.SPILL_HOT);
        assertThat(ViewPolicy.reason("SPILL_NEXT_YEAR")).as("a later library's").isEqualTo(RouteReason.FALLBACK_LOAD_ONLY);
    }
}
