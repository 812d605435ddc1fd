package dev.kvrouter.balancer;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class OwnLeastConnectionsTest {

    @Test
    void theEngineWithFewestOfThisClientsRequestsWinsAndTiesTakeTurns() {
        OwnLeastConnections counts = new OwnLeastConnections(100);
        List<String> engines = List.of("a", "b", "c");
        List<String> chosen = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            String e = counts.choose(engines, Set.of()).orElseThrow();
            counts.started("r" + i, e);
            chosen.add(e);
        }
        assertThat(chosen.subList(0, 3)).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(chosen.subList(3, 6)).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(counts.inFlight("a")).isEqualTo(2);

        counts.ended("r0");
        counts.ended("r0"); // twice: counted once
        counts.ended("unknown");
        assertThat(counts.inFlight(chosen.get(0))).isEqualTo(1);
        assertThat(counts.choose(engines, Set.of())).as("the only engine with one in flight").contains(chosen.get(0));
    }

    @Test
    void avoidedEnginesAreLeftOutAndNoneLeftIsEmpty() {
        OwnLeastConnections counts = new OwnLeastConnections(100);
        assertThat(counts.choose(List.of("a", "b"), Set.of("a"))).contains("b");
        assertThat(counts.choose(List.of("a", "b"), Set.of("a", "b"))).isEmpty();
        assertThat(counts.choose(List.of(), Set.of())).isEmpty();
    }

    @Test
    void requestsNeverReportedDoneAreForgottenPastTheCapOldestFirst() {
        OwnLeastConnections counts = new OwnLeastConnections(3);
        for (int i = 0; i < 10; i++) {
            counts.started("r" + i, "a");
        }
        assertThat(counts.inFlight("a")).as("bounded: only the 3 newest count").isEqualTo(3);
        counts.ended("r0"); // forgotten already: nothing to take off
        assertThat(counts.inFlight("a")).isEqualTo(3);
        counts.ended("r9");
        assertThat(counts.inFlight("a")).isEqualTo(2);
    }

    @Test
    void aRequestStartedAgainUnderTheSameIdMovesInsteadOfCountingTwice() {
        OwnLeastConnections counts = new OwnLeastConnections(10);
        counts.started("r", "a");
        counts.started("r", "b"); // the balancer retried it elsewhere
        assertThat(counts.inFlight("a")).isZero();
        assertThat(counts.inFlight("b")).isEqualTo(1);
    }
}
