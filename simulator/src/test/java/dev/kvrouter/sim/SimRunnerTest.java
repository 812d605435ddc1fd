package dev.kvrouter.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.sim.engine.EngineConfig;
import dev.kvrouter.sim.engine.Failure;
import dev.kvrouter.sim.metrics.ClassStats;
import dev.kvrouter.sim.policy.Policies;
import dev.kvrouter.sim.sink.EventSink;
import dev.kvrouter.sim.sink.InMemorySink;
import dev.kvrouter.sim.workload.SyntheticWorkload;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SimRunnerTest {

    private static final EngineConfig SMALL = EngineConfig.defaults().withCapacity(4_096);

    private static SimRunner.Result run(List<Failure> failures) throws Exception {
        SimRunner runner = new SimRunner(SimRunner.Settings.defaults(4, SMALL).withFailures(failures).withWindowMs(30_000), null);
        List<SimRunner.FleetSpec> specs = new ArrayList<>();
        for (String p : Policies.IN_MEMORY) {
            specs.add(new SimRunner.FleetSpec(Policies.factory(p, Policies.Settings.defaults()), EventSink.DISCARD));
        }
        return runner.run(new SyntheticWorkload("mixed", SyntheticWorkload.Settings.defaults(120, 3)), specs);
    }

    @Test
    void everyPolicySeesTheSameStreamAndARunIsReproducible() throws Exception {
        SimRunner.Result a = run(List.of());
        SimRunner.Result b = run(List.of());
        assertThat(a.policies()).hasSize(Policies.IN_MEMORY.size());
        for (int i = 0; i < a.policies().size(); i++) {
            ClassStats.Summary x = a.policies().get(i).overall();
            ClassStats.Summary y = b.policies().get(i).overall();
            assertThat(x.requests()).isEqualTo(a.requests());
            assertThat(x.completed() + x.failed()).isEqualTo(a.requests());
            assertThat(x).isEqualTo(y);
        }
        ClassStats.Summary rr = a.policies().get(0).overall();
        ClassStats.Summary oracle = a.policies().get(5).overall();
        assertThat(oracle.blockHitRate()).isGreaterThan(rr.blockHitRate());
        assertThat(oracle.staleness()).isLessThan(0.05);
        assertThat(a.policies().get(0).perClass()).containsKeys("all", "system-prompt", "chat", "one-shot", "burst");
    }

    @Test
    void aKilledEngineFailsItsRequestsInEveryFleetAndTheRestCarryOn() throws Exception {
        SimRunner.Result r = run(List.of(Failure.parse("kill:1@60")));
        for (var p : r.policies()) {
            assertThat(p.overall().failed()).as(p.policy()).isBetween(1L, 60L);
            assertThat(p.overall().completed() + p.overall().failed()).isEqualTo(r.requests());
        }
    }

    @Test
    void thePublishingFleetEmitsADecisionAndAnOutcomePerRequest() throws Exception {
        InMemorySink sink = new InMemorySink();
        SimRunner runner = new SimRunner(SimRunner.Settings.defaults(2, SMALL), null);
        SimRunner.Result r = runner.run(new SyntheticWorkload("chat", SyntheticWorkload.Settings.defaults(30, 1)),
                List.of(new SimRunner.FleetSpec(Policies.factory("sglang", Policies.Settings.defaults()), sink)));
        assertThat(sink.decisions).hasSize((int) r.requests());
        assertThat(sink.outcomes).hasSize((int) r.requests());
        assertThat(sink.loads).isNotEmpty();
        assertThat(sink.kvEvents).isNotEmpty();
        assertThat(sink.decisions.get(0).getPromptBlockHashes()).isNotEmpty();
    }

    @Test
    void theTruthLogShowsEachPlacementBesideWhatTheEnginesHeldTheOracleNeverMissesAHolder(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path file = dir.resolve("truth.csv");
        SimRunner runner = new SimRunner(SimRunner.Settings.defaults(4, SMALL).withTruthLog(file), null);
        SimRunner.Result r = runner.run(new SyntheticWorkload("chat", SyntheticWorkload.Settings.defaults(60, 1)),
                List.of(new SimRunner.FleetSpec(Policies.factory("round-robin", Policies.Settings.defaults()), EventSink.DISCARD),
                        new SimRunner.FleetSpec(Policies.factory("oracle", Policies.Settings.defaults()), EventSink.DISCARD)));
        List<String[]> lines = java.nio.file.Files.readAllLines(file).stream().skip(1).map(l -> l.split(",", -1)).toList();
        assertThat(java.nio.file.Files.readAllLines(file).get(0)).isEqualTo(dev.kvrouter.sim.metrics.TruthLog.HEADER);
        assertThat(lines).hasSize((int) (2 * r.requests()));
        List<String[]> oracle = lines.stream().filter(l -> l[0].equals("oracle")).toList();
        List<String[]> roundRobin = lines.stream().filter(l -> l[0].equals("round-robin")).toList();
        // The oracle reads the true caches: what it predicts is what its engine holds, and it goes cold only where nobody holds anything.
        assertThat(oracle).allSatisfy(l -> assertThat(l[5]).isEqualTo(l[7]));
        assertThat(oracle.stream().filter(l -> l[3].equals("COLD"))).allSatisfy(l -> assertThat(l[8]).isEqualTo("0"));
        // Round-robin ignores the caches: it leaves a held prefix behind on some of the second turns.
        assertThat(roundRobin.stream().filter(l -> Integer.parseInt(l[8]) > Integer.parseInt(l[7]))).isNotEmpty();
    }

    @Test
    void failureSpecs() {
        assertThat(Failure.parse("kill:2@120")).isEqualTo(new Failure(Failure.Kind.KILL, 2, 120, 0, 1, 0));
        assertThat(Failure.parse("restart:3@200s/5s")).isEqualTo(new Failure(Failure.Kind.RESTART, 3, 200, 5, 1, 0));
        assertThat(Failure.parse("slow:1@60/30x0.5")).isEqualTo(new Failure(Failure.Kind.SLOW, 1, 60, 30, 0.5, 0));
        assertThat(Failure.parse("gap:0@10/7")).isEqualTo(new Failure(Failure.Kind.GAP, 0, 10, 0, 1, 7));
    }

    @Test
    void aPacedClockTracksWallTimeTimesSpeed() throws Exception {
        VirtualClock clock = new VirtualClock(10); // 10 virtual seconds per wall second
        List<Double> at = new ArrayList<>();
        clock.at(0, () -> at.add(clock.nowMs()));
        clock.at(2_000, () -> at.add(clock.nowMs()));
        long t0 = System.nanoTime();
        clock.runUntil(5_000);
        double wallMs = (System.nanoTime() - t0) / 1e6;
        assertThat(at).containsExactly(0.0, 2_000.0);
        assertThat(wallMs).isBetween(180.0, 3_000.0); // generous: the machine may be busy
    }
}
