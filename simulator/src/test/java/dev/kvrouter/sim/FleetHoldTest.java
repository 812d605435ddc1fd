package dev.kvrouter.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.events.RouteReason;
import dev.kvrouter.sim.engine.EngineConfig;
import dev.kvrouter.sim.metrics.ClassStats;
import dev.kvrouter.sim.policy.FleetView;
import dev.kvrouter.sim.policy.Policy;
import dev.kvrouter.sim.policy.PolicyRequest;
import dev.kvrouter.sim.policy.Route;
import dev.kvrouter.sim.sink.EventSink;
import dev.kvrouter.sim.workload.Prompt;
import dev.kvrouter.sim.workload.SimRequest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A balancer that holds requests while its one engine is full: the held request goes in when the
 * running one ends, counts its wait in its TTFT, and keeps its place meanwhile. One engine of one
 * slot, prefill 1 token/ms, decode 10 ms/token.
 */
class FleetHoldTest {

    private static final EngineConfig CONFIG = new EngineConfig("m", 4, 64, 1_000, 100, 1, 1_000, false);
    private static final CanonicalBlockHasher HASHER = new CanonicalBlockHasher(4);

    /** Holds while the engine runs anything, else places there; records what it is told it still holds. */
    private static final class HoldWhileFull implements Policy {
        final List<List<String>> kept = new ArrayList<>();
        int asked;

        @Override
        public String name() {
            return "hold";
        }

        @Override
        public Route route(PolicyRequest request, FleetView fleet) {
            asked++;
            return fleet.load(0) >= 1 ? Route.hold() : new Route(0, 0, RouteReason.COLD);
        }

        @Override
        public void holding(List<String> requestIds) {
            kept.add(requestIds);
        }
    }

    private static SimRequest request(long seed, double atMs, int outputTokens) {
        Prompt prompt = Prompt.of(new Prompt.Segment(seed, 8));
        return new SimRequest(0, atMs, "c", "client", prompt, outputTokens);
    }

    @Test
    void aHeldRequestGoesInWhenTheSlotFreesAndItsWaitCountsInItsTtft() throws Exception {
        VirtualClock clock = new VirtualClock(0, 1_000_000);
        HoldWhileFull policy = new HoldWhileFull();
        Fleet fleet = new Fleet(policy, 1, CONFIG, clock, EventSink.DISCARD, 10_000);
        SimRequest r1 = request(1, 0, 50);  // prefill 8 ms, decode 500 ms: ends at 508
        SimRequest r2 = request(2, 5, 1);
        clock.at(0, () -> fleet.arrive("r1", r1, HASHER.chain("m", null, r1.prompt().tokens(), null)));
        clock.at(5, () -> fleet.arrive("r2", r2, HASHER.chain("m", null, r2.prompt().tokens(), null)));
        clock.runUntil(6);
        assertThat(fleet.pending()).as("one running, one held").isEqualTo(2);
        clock.runUntil(10_000);

        ClassStats.Summary all = fleet.metrics().result(0).overall();
        assertThat(all.completed()).isEqualTo(2);
        assertThat(all.held()).isEqualTo(1);
        assertThat(all.heldMeanMs()).as("from its arrival at 5 to r1's end at 508").isEqualTo(503);
        assertThat(all.ttftP99Ms()).as("503 held + 8 of prefill").isEqualTo(511);
        assertThat(fleet.pending()).isZero();
        // Asked at arrival, at every 25 ms poll until 508 (20 polls), and once more as r1 ended.
        assertThat(policy.asked).isBetween(2 + 20, 2 + 21);
        assertThat(policy.kept).as("its place kept every 250 ms while held").hasSizeBetween(2, 3)
                .allSatisfy(ids -> assertThat(ids).containsExactly("r2"));
    }
}
