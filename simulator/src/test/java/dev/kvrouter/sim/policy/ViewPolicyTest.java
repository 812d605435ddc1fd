package dev.kvrouter.sim.policy;

import static dev.kvrouter.sim.policy.FakeFleet.request;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.balancer.KvRouterClient;
import dev.kvrouter.balancer.PickPolicy;
import dev.kvrouter.events.RouteReason;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ViewPolicyTest {

    private static KvRouterClient.Pick pick(String engine, int matched, String reason) {
        return new KvRouterClient.Pick(engine, matched, reason, 10, 1.0, KvRouterClient.Source.VIEW, PickPolicy.Saving.NONE);
    }

    @Test
    void passesTheChainClassAndClientAndMapsTheAnswerOntoTheFleet() {
        List<Object[]> calls = new ArrayList<>();
        ViewPolicy p = new ViewPolicy((chain, cls, client) -> {
            calls.add(new Object[] {chain, cls, client});
            return pick("e2", 3, "AFFINITY");
        }, () -> {});
        FakeFleet fleet = new FakeFleet(0, 0, 5);
        assertThat(p.route(request(1, 2, 3), fleet)).isEqualTo(new Route(2, 3, RouteReason.AFFINITY));
        assertThat((long[]) calls.get(0)[0]).containsExactly(1, 2, 3);
        assertThat(calls.get(0)[1]).isEqualTo("c");
        assertThat(calls.get(0)[2]).isEqualTo("client");
    }

    @Test
    void anUnknownOrDeadEngineFallsBackToLeastLoaded() {
        FakeFleet fleet = new FakeFleet(4, 1, 5);
        assertThat(new ViewPolicy((c, k, l) -> pick("", 0, "NO_VIEW"), () -> {}).route(request(1), fleet))
                .isEqualTo(new Route(1, 0, RouteReason.FALLBACK_LOAD_ONLY));
        fleet.alive[2] = false;
        assertThat(new ViewPolicy((c, k, l) -> pick("e2", 4, "AFFINITY"), () -> {}).route(request(1), fleet).engine()).isEqualTo(1);
        assertThat(ViewPolicy.reason("SPILL_CLIENT_CAP")).isEqualTo(RouteReason.SPILL_CLIENT_CAP);
        assertThat(ViewPolicy.reason("NO_VIEW")).isEqualTo(RouteReason.FALLBACK_LOAD_ONLY);
    }
}
