package dev.kvrouter.jobs.view.functions;

import dev.kvrouter.events.EngineHealth;
import dev.kvrouter.events.EngineLifecycle;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.EngineRole;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.jobs.io.HotPrefix;
import dev.kvrouter.jobs.io.LocationUpdate;
import dev.kvrouter.jobs.view.TestConfigs;
import dev.kvrouter.jobs.view.model.EngineStatus;
import dev.kvrouter.replicas.ReplicationRecommendation;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.co.KeyedCoProcessOperator;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;

/**
 * The operator state a version of the job writes, pinned as files so a later version can prove it
 * restores them (as Flink's own migration tests do): {@code state-snapshots/<operator>-v<N>.snapshot}
 * under the test resources, one per version whose state classes changed.
 *
 * <p>Run this with the code of the version being pinned, before its state classes change (version
 * 1 was written at commit ea842c6, with the state classes of 57f77de, the fields then named {@code health}, {@code previous}
 * and {@code role}), from {@code flink-jobs}: {@code mvn -o test-compile exec:java
 * -Dexec.classpathScope=test -Dexec.mainClass=dev.kvrouter.jobs.view.functions.EngineStateSnapshots
 * -Dexec.args=N}. The scenes below write a unified engine with requests waiting, a decode engine, a
 * draining one and a silent (suspect) one; {@code EngineStateMigrationTest} restores them.
 */
public final class EngineStateSnapshots {

    static final Path DIR = Path.of("src/test/resources/state-snapshots");
    static final String MODEL = "m";
    /** When the snapshots are taken (processing time): e4 has been silent past engine.suspect-after. */
    static final long TAKEN_AT_MS = 8_000;

    static KvRouterJobConfig config() {
        return TestConfigs.with("engine.suspect-after", "5 s", "engine.dead-after", "60 s", "engine.update-interval", "1 s");
    }

    /** The tracker's harness, not opened yet: restore a snapshot into it, or open it empty. Max parallelism 1, one subtask. */
    static KeyedTwoInputStreamOperatorTestHarness<String, KvEventBatch, EngineLoad, LocationUpdate> engineTracker() throws Exception {
        KvRouterJobConfig config = config();
        return new KeyedTwoInputStreamOperatorTestHarness<>(new KeyedCoProcessOperator<>(new EngineTracker(config.view(), config.engines())),
                b -> EngineTracker.engineKey(b.getEngineId(), b.getDataParallelRank()),
                l -> EngineTracker.engineKey(l.getEngineId(), l.getDataParallelRank()), Types.STRING, 1, 1, 0);
    }

    /** The replica planner's harness, not opened yet. */
    static KeyedTwoInputStreamOperatorTestHarness<String, HotPrefix, EngineStatus, ReplicationRecommendation> replicaPlanner()
            throws Exception {
        return new KeyedTwoInputStreamOperatorTestHarness<>(new KeyedCoProcessOperator<>(new ReplicaPlanner(2, 3, 2.0)),
                p -> "fleet", s -> "fleet", Types.STRING, 1, 1, 0);
    }

    static EngineLoad load(String engine, int waiting, int running, EngineLifecycle lifecycle, EngineRole role, long tsMs) {
        return EngineLoad.newBuilder().setEngineId(engine).setModel(MODEL).setTsMs(tsMs).setWaiting(waiting).setRunning(running)
                .setKvBlocksUsed(100).setKvBlocksCapacity(1000).setLifecycle(lifecycle).setRole(role).build();
    }

    static KvEventBatch batch(String engine, long seq, long tsMs) {
        return KvEventBatch.newBuilder().setEngineId(engine).setModel(MODEL).setSeq(seq).setTsMs(tsMs).setEvents(List.of()).build();
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1 || !args[0].matches("[1-9][0-9]*")) {
            throw new IllegalArgumentException("usage: EngineStateSnapshots <state version, a positive number>");
        }
        String version = args[0];
        Files.createDirectories(DIR);
        try (var tracker = engineTracker()) {
            tracker.open();
            tracker.setProcessingTime(0);
            // e1: unified, requests waiting (its slots learned); e2: the decode pool; e3: draining;
            // e4: heard from once, then silent until it is suspect.
            tracker.processElement2(load("e1", 3, 8, EngineLifecycle.READY, EngineRole.BOTH, 0), 0);
            tracker.processElement2(load("e2", 0, 2, EngineLifecycle.READY, EngineRole.DECODE, 0), 0);
            tracker.processElement2(load("e3", 0, 1, EngineLifecycle.DRAINING, EngineRole.BOTH, 0), 0);
            tracker.processElement1(batch("e4", 0, 0), 0);
            tracker.setProcessingTime(TAKEN_AT_MS - 1_000);
            tracker.processElement2(load("e1", 3, 8, EngineLifecycle.READY, EngineRole.BOTH, TAKEN_AT_MS - 1_000), TAKEN_AT_MS - 1_000);
            tracker.processElement2(load("e2", 0, 2, EngineLifecycle.READY, EngineRole.DECODE, TAKEN_AT_MS - 1_000), TAKEN_AT_MS - 1_000);
            tracker.processElement2(load("e3", 0, 1, EngineLifecycle.DRAINING, EngineRole.BOTH, TAKEN_AT_MS - 1_000), TAKEN_AT_MS - 1_000);
            tracker.setProcessingTime(TAKEN_AT_MS);
            OperatorSnapshotUtil.writeStateHandle(tracker.snapshot(1, TAKEN_AT_MS),
                    DIR.resolve("engine-tracker-v" + version + ".snapshot").toString());
        }
        try (var planner = replicaPlanner()) {
            planner.open();
            planner.setProcessingTime(0);
            for (EngineStatus s : fleet()) {
                planner.processElement2(s, 0);
            }
            OperatorSnapshotUtil.writeStateHandle(planner.snapshot(1, TAKEN_AT_MS),
                    DIR.resolve("replica-planner-v" + version + ".snapshot").toString());
        }
        System.out.println("wrote " + DIR.resolve("*-v" + version + ".snapshot"));
    }

    /** What the replica planner keeps of the fleet: e1 and e3 ready (e3 idle), e2 the decode pool. */
    static List<EngineStatus> fleet() {
        return List.of(status("e1", "READY", "BOTH", 1), status("e2", "READY", "DECODE", 2), status("e3", "READY", "BOTH", 0));
    }

    private static EngineStatus status(String engine, String health, String role, int running) {
        EngineStatus s = new EngineStatus();
        s.engine = engine;
        s.currentHealth = EngineHealth.valueOf(health);
        s.previousHealth = s.currentHealth;
        s.servingRole = EngineRole.valueOf(role);
        s.running = running;
        return s;
    }

    private EngineStateSnapshots() {}
}
