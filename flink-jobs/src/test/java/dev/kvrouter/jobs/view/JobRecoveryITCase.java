package dev.kvrouter.jobs.view;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.balancer.KvRouterClient;
import dev.kvrouter.balancer.KvRouterClient.Pick;
import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.common.TopicNames;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.dlq.DeadLetter;
import dev.kvrouter.events.EngineHealth;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.stack.Directories;
import dev.kvrouter.stack.LocalRedis;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.LocalStackExtension;
import dev.kvrouter.stack.junit.UniqueNames;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Faults a, c, d and f of the recovery table, on the real stack: each run's final view is compared with
 * the view a clean run of the same input ends with (every block of every prompt on the one engine:
 * {@link ViewTestSupport#entriesOf}), entry for entry, epochs and times left out.
 */
@ExtendWith(LocalStackExtension.class)
class JobRecoveryITCase {

    private static final int PROMPTS = 400;
    private static final int BLOCKS_PER_PROMPT = 8;

    /**
     * Where the TaskManagers keep a job's state changelog: Flink reads the changelog storage from the
     * TaskManager's configuration, not the job's (on a cluster, its config file; README, "Failure and
     * recovery"). Removed after the class.
     */
    private static final Path CHANGELOG_STORAGE = temporaryDirectory("kvr-recovery-changelog");

    @RegisterExtension
    static final MiniClusterExtension FLINK = ViewTestSupport.miniCluster(2, changelogStorage(CHANGELOG_STORAGE));
    /**
     * TaskManagers the shared MiniCluster has started (it numbers them in start order, from one at
     * first); one runs at a time, the last started.
     */
    private static int taskManagersStarted = 1;

    @TempDir
    Path dir;

    /**
     * Fault a: the TaskManager running the job dies mid-stream (as kill -9 would) and a new one takes
     * over; on the heap backend, and with the state changelog (job.state-changelog), where the
     * restore reads the last materialized state and replays the changes logged since.
     */
    @ParameterizedTest(name = "state changelog {0}")
    @ValueSource(booleans = {false, true})
    void aTaskManagerKilledMidStreamCostsNoEntryAndAddsNone(boolean changelog, StackAddresses stack, @InjectMiniCluster MiniCluster flink)
            throws Exception {
        try (Scene scene = new Scene(stack, "it-tm-kill", "hashmap", changelog)) {
            List<int[]> prompts = ViewTestSupport.prompts(21, PROMPTS, BLOCKS_PER_PROMPT);
            List<int[]> firstHalf = prompts.subList(0, PROMPTS / 2);
            scene.store(firstHalf);
            Set<String> half = scene.clean(firstHalf);
            awaitTrue(() -> scene.entries().equals(half), "the first half in the view");
            long checkpoints = completedCheckpoints(flink, scene.job);
            awaitTrue(() -> completedCheckpoints(flink, scene.job) >= checkpoints + 2, "two more checkpoints");

            // The running TaskManager dies and a new one starts: the MiniCluster is shared, so a second
            // run kills the first one's replacement.
            flink.terminateTaskManager(taskManagersStarted - 1).get(30, TimeUnit.SECONDS);
            flink.startTaskManager();
            taskManagersStarted++;
            scene.store(prompts.subList(PROMPTS / 2, PROMPTS));

            Set<String> clean = scene.clean(prompts);
            awaitTrue(() -> scene.entries().equals(clean), "every entry of the clean run, and no other");
            assertThat(maxAttempt(flink, scene.job)).as("the job did restart: the fault happened").isPositive();
            // (Uploaded changes are discarded once a checkpoint no longer needs them: the job's own
            // directory in the storage is what stays while it runs.)
            assertThat(Files.isDirectory(CHANGELOG_STORAGE.resolve(scene.job.getJobID().toString())))
                    .as("the job's state changes logged in the TaskManagers' changelog storage").isEqualTo(changelog);
        }
    }

    /**
     * Fault c: the view's Redis restarts empty under the running job (killed, and started again on its
     * port without persistence). The job notices (a new run id), loads its functions again and writes
     * every block from its state: the view comes back entry for entry, {@code kvr_pick} answers, and no
     * task restarts. Prints how long 20 000 entries took to come back.
     */
    @Test
    void aRedisRestartedEmptyGetsEveryEntryBackWithoutATaskRestart(StackAddresses stack, @InjectMiniCluster MiniCluster flink)
            throws Exception {
        try (Scene scene = new Scene(stack, "it-redis-restart", "hashmap");
             KvRouterClient router = new KvRouterClient(KvRouterClient.Options.defaults(scene.redis.url())
                     .withKeyPrefix(scene.config.view().keyPrefix()).observing().withMaxViewAge(Duration.ofMinutes(5)))) {
            List<int[]> prompts = ViewTestSupport.prompts(24, 1_250, 16);
            Set<String> clean = scene.clean(prompts);
            RedisCommands<String, String> sync = scene.connection.sync();
            scene.store(prompts);
            awaitTrue(() -> scene.entries().equals(clean), "the view");
            Map<String, Map<String, String>> before = ViewTestSupport.blockFields(sync, scene.layout);
            long[] chain = new CanonicalBlockHasher(16).chain(FakeEngine.MODEL, null, prompts.get(7), List.of());
            assertThat(router.pick(chain)).extracting(Pick::engineId, Pick::matchedBlocks).containsExactly(scene.engine.id, 16);

            // A key nobody writes but this test: gone after the restart proves Redis came back empty
            // (the job may already have written its engine table and meta by the time we look).
            String marker = scene.config.view().keyPrefix() + "it-marker";
            sync.set(marker, "before the restart");
            scene.redis.restartEmpty();
            long restarted = System.nanoTime();
            assertThat(sync.exists(marker)).as("Redis came back empty").isZero();
            awaitTrue(() -> ViewTestSupport.blockFields(sync, scene.layout).equals(before), "every field as before the restart");
            System.out.printf("JobRecoveryITCase: %d block entries back %d ms after Redis answered again%n",
                    clean.size(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restarted));
            Pick after = ViewTestSupport.await(() -> router.pick(chain), p -> "AFFINITY".equals(p.reason()));
            assertThat(after).extracting(Pick::engineId, Pick::matchedBlocks).containsExactly(scene.engine.id, 16);
            assertThat(maxAttempt(flink, scene.job)).as("no task restarted").isZero();
        }
    }

    /**
     * Fault d, with the savepoint round trip on RocksDB (incremental checkpoints): the job is stopped
     * with a savepoint and stays down longer than {@code engine.dead-after} while its engine keeps
     * reporting; Redis restarts empty meanwhile. Started again from the savepoint, the job writes the
     * whole view back from its state and never declares the engine dead for its own downtime.
     */
    @Test
    void aJobDownLongerThanDeadAfterComesBackFromItsSavepointOnRocksDbWithItsEngineAndEveryEntry(StackAddresses stack)
            throws Exception {
        try (Scene scene = new Scene(stack, "it-savepoint", "rocksdb")) {
            List<int[]> prompts = ViewTestSupport.prompts(22, PROMPTS, BLOCKS_PER_PROMPT);
            Set<String> clean = scene.clean(prompts);
            scene.store(prompts);
            awaitTrue(() -> scene.entries().equals(clean), "the view");
            String savepoint = scene.job.stopWithSavepoint(false, dir.resolve("savepoints").toUri().toString(),
                    SavepointFormatType.CANONICAL).get(60, TimeUnit.SECONDS);

            scene.redis.restartEmpty();
            Thread.sleep(6_000); // down for twice engine.dead-after, the engine reporting all along
            scene.job = start(scene.config, savepoint);
            awaitTrue(() -> scene.entries().equals(clean), "every entry back in an empty Redis, from the restored state");
            Thread.sleep(6_000); // past dead-after again, read from the restore on
            assertThat(scene.connection.sync().hget(scene.layout.enginesKey(), scene.engine.id))
                    .as("the engine is in the engine table").startsWith("READY|");
            assertThat(scene.entries()).isEqualTo(clean);
            assertThat(ViewTestSupport.healthChanges(stack, scene.config, scene.engine.id)).as("no engine dropped for the job's own downtime")
                    .contains(EngineHealth.READY).doesNotContain(EngineHealth.SUSPECT, EngineHealth.DEAD);
        }
    }

    /** Fault f: a record too big for the dead-letter topic is filed truncated, and costs the job no restart. */
    @Test
    void aTwoMegabyteMalformedRecordIsDeadLetteredTruncatedAndNoTaskRestarts(StackAddresses stack, @InjectMiniCluster MiniCluster flink)
            throws Exception {
        try (Scene scene = new Scene(stack, "it-oversize", "hashmap");
             KafkaProducer<String, byte[]> raw = new KafkaProducer<>(Map.of(
                     ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.kafkaBootstrap(),
                     ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 4 * 1024 * 1024,
                     ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                     ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
            List<int[]> prompts = ViewTestSupport.prompts(23, 20, BLOCKS_PER_PROMPT);
            String kvEvents = scene.config.kafka().topic(TopicNames.KV_EVENTS);
            byte[] twoMiB = new byte[2 * 1024 * 1024];
            java.util.Arrays.fill(twoMiB, (byte) '{');
            raw.send(new ProducerRecord<>(kvEvents, scene.engine.id, twoMiB)).get();
            scene.store(prompts); // after it, on the same partition
            Set<String> clean = scene.clean(prompts);
            awaitTrue(() -> scene.entries().equals(clean), "the batches after the oversize record in the view");
            try (KafkaConsumer<String, DeadLetter> consumer = ViewTestSupport.consumer(stack, "it-oversize-dlq",
                    scene.config.kafka().topic(TopicNames.DEAD_LETTER))) {
                List<DeadLetter> letters = new ArrayList<>();
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (letters.isEmpty() && System.nanoTime() < deadline) {
                    consumer.poll(Duration.ofMillis(200)).forEach(r -> letters.add(r.value()));
                }
                assertThat(letters).singleElement().satisfies(d -> {
                    assertThat(d.getTruncated()).isTrue();
                    assertThat(d.getRawValueBytes()).isEqualTo(twoMiB.length);
                    assertThat(d.getSourceTopic()).isEqualTo(kvEvents);
                });
            }
            assertThat(maxAttempt(flink, scene.job)).as("no task restarted").isZero();
        }
    }

    /**
     * One fault's setting: a private Redis, the job on it, one engine reporting alive from the start,
     * a producer for its events and a connection to the view. Closed in reverse: the job (the one
     * running last) is cancelled before Redis stops.
     */
    private final class Scene implements AutoCloseable {
        final FakeEngine engine = new FakeEngine(UniqueNames.topic("engine"), 16);
        // Set in order by the constructor; close() stops whatever was set, also after a failed start.
        LocalRedis redis;
        KvRouterJobConfig config;
        ViewLayout layout;
        RedisClient client;
        StatefulRedisConnection<String, String> connection;
        KafkaProducer<String, Object> producer;
        ViewTestSupport.Heartbeats alive;
        JobClient job;

        Scene(StackAddresses stack, String name, String stateBackend) throws Exception {
            this(stack, name, stateBackend, false);
        }

        Scene(StackAddresses stack, String name, String stateBackend, boolean changelog) throws Exception {
            try {
                redis = LocalRedis.start(dir.resolve("redis"));
                config = config(stack, ViewTestSupport.topics(stack, name), redis, stateBackend, changelog);
                layout = new ViewLayout(config.view().keyPrefix());
                client = RedisClient.create(redis.url());
                connection = client.connect();
                producer = ViewTestSupport.producer(stack);
                alive = new ViewTestSupport.Heartbeats(producer, config, engine);
                job = start(config, null);
            } catch (Exception | Error e) {
                close();
                throw e;
            }
        }

        /** One batch per 20 prompts, every block of each. */
        void store(List<int[]> prompts) {
            for (int i = 0; i < prompts.size(); i += 20) {
                Object[] events = prompts.subList(i, Math.min(prompts.size(), i + 20)).stream()
                        .map(p -> engine.stored(p, 0, p.length / 16)).toArray();
                producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.KV_EVENTS), engine.id, engine.batch(events)));
            }
            producer.flush();
        }

        /** The view a clean run of these prompts ends with: every block of each on the engine. */
        Set<String> clean(List<int[]> prompts) {
            return ViewTestSupport.entriesOf(layout, engine.id, prompts, config.view().tagDepth());
        }

        /** The view's block entries now. */
        Set<String> entries() {
            return ViewTestSupport.entries(ViewTestSupport.blockFields(connection.sync(), layout));
        }

        @Override
        public void close() throws Exception {
            try {
                if (job != null) {
                    job.cancel().get(30, TimeUnit.SECONDS);
                }
            } finally {
                if (alive != null) {
                    alive.close();
                }
                if (producer != null) {
                    producer.close();
                }
                if (connection != null) {
                    connection.close();
                }
                if (client != null) {
                    client.shutdown();
                }
                if (redis != null) {
                    redis.close();
                }
            }
        }
    }

    private KvRouterJobConfig config(StackAddresses stack, String topics, LocalRedis redis, String stateBackend, boolean changelog) {
        return ViewTestSupport.config(stack, topics, redis.url(),
                "engine.suspect-after", "2 s", "engine.dead-after", "3 s",
                "engine.default-residency", "1 h", "engine.max-residency", "1 h",
                "job.state-backend", stateBackend, "job.checkpoint-dir", dir.resolve("checkpoints").toUri().toString(),
                "job.state-changelog", Boolean.toString(changelog));
    }

    /** The TaskManagers' side of job.state-changelog: the file storage, under {@code directory}. */
    private static org.apache.flink.configuration.Configuration changelogStorage(Path directory) {
        org.apache.flink.configuration.Configuration c = new org.apache.flink.configuration.Configuration();
        c.set(org.apache.flink.configuration.StateChangelogOptions.STATE_CHANGE_LOG_STORAGE, "filesystem");
        c.set(KvRouterJob.CHANGELOG_BASE_PATH, directory.toUri().toString());
        return c;
    }

    private static Path temporaryDirectory(String prefix) {
        try {
            return Files.createTempDirectory(prefix);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @AfterAll
    static void removeChangelogStorage() {
        Directories.deleteRecursively(CHANGELOG_STORAGE);
    }

    private static JobClient start(KvRouterJobConfig config, String savepoint) throws Exception {
        StreamExecutionEnvironment env = KvRouterJob.environment(config, savepoint);
        KvRouterJob.wire(env, config);
        return env.executeAsync("recovery");
    }

    private static long completedCheckpoints(MiniCluster flink, JobClient job) {
        try {
            return flink.getExecutionGraph(job.getJobID()).get().getCheckpointStatsSnapshot().getCounts()
                    .getNumberOfCompletedCheckpoints();
        } catch (Exception e) {
            return -1;
        }
    }

    private static int maxAttempt(MiniCluster flink, JobClient job) throws Exception {
        int max = 0;
        for (AccessExecutionVertex task : flink.getExecutionGraph(job.getJobID()).get().getAllExecutionVertices()) {
            max = Math.max(max, task.getCurrentExecutionAttempt().getAttemptNumber());
        }
        return max;
    }

    private static void awaitTrue(BooleanSupplier condition, String what) throws InterruptedException {
        ViewTestSupport.awaitTrue(condition, what, Duration.ofSeconds(90));
    }
}
