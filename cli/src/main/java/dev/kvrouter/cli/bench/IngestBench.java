package dev.kvrouter.cli.bench;

import com.sun.management.GarbageCollectionNotificationInfo;
import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.common.TopicNames;
import dev.kvrouter.common.config.ClientConfig;
import dev.kvrouter.contract.RedisSecurity;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.events.BlockStored;
import dev.kvrouter.events.EngineLifecycle;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.jobs.view.KvRouterJob;
import dev.kvrouter.schemas.BlockHashes;
import dev.kvrouter.schemas.registry.RegistrySettings;
import dev.kvrouter.schemas.serde.RegistryAvroSerializer;
import dev.kvrouter.stack.Directories;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.topics.KafkaClients;
import dev.kvrouter.topics.TopicApplier;
import dev.kvrouter.topics.TopicCatalog;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ListenerNotFoundException;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * {@code kvr bench ingest}: the routing-view job end to end (Kafka → Flink MiniCluster → Redis)
 * beside its ceiling, raw pipelined Redis writes of the same entries from one client.
 */
final class IngestBench {

    private static final int BLOCK = 16;
    private static final int BLOCKS_PER_BATCH = 16;
    private static final int BATCHES_PER_PROMPT = 4;
    private static final String MODEL = "bench-model";

    private IngestBench() {}

    /** One batch and where its last block must show up in Redis. */
    private record Planned(String engine, KvEventBatch batch, String lastKey, String lastField) {}

    /**
     * With {@code warmUpEntries > 0} a first job drains a backlog of its own (a fresh JVM's figures:
     * the JIT compiles much of the job's code during it) and is cancelled. Then the ceiling is
     * measured, and a job, from empty state, drains the measured backlog (after a warm-up, a
     * long-running job's figures); its view is then flushed and rewritten, and its freshness measured.
     * Only the batch being produced and each engine's last one are kept, so that the bench's own data
     * does not weigh on the collector while a job drains.
     */
    static void run(StackAddresses stack, int entries, int warmUpEntries, int engines, Duration freshness, double freshnessRate,
                    Map<String, String> jobOptions, PrintStream out) throws Exception {
        String id = UUID.randomUUID().toString().substring(0, 8);
        ClientConfig client = stack.client();
        RedisClient redisClient = RedisSecurity.fromConfig(client.redis()).standaloneClient(stack.redisUrl());
        // The jobs' checkpoints (and state changelog) for this run only: removed when it ends.
        Path checkpoints = Files.createTempDirectory("kvr-bench-checkpoints");
        Map<String, String> options = new LinkedHashMap<>(Map.of("job.checkpoint-dir", checkpoints.toUri().toString()));
        options.putAll(jobOptions);
        Pipeline warmUp = warmUpEntries > 0 ? new Pipeline(stack, "bench-" + id + "-warm", warmUpEntries, engines, options) : null;
        Pipeline measured = new Pipeline(stack, "bench-" + id, entries, engines, options);
        List<Pipeline> pipelines = warmUp == null ? List.of(measured) : List.of(warmUp, measured);
        try (Admin admin = Admin.create(KafkaClients.config(client, Map.of("bootstrap.servers", stack.kafkaBootstrap())));
             StatefulRedisConnection<String, String> c = redisClient.connect();
             KafkaProducer<String, Object> producer = producer(stack, client)) {
            RedisCommands<String, String> redis = c.sync();
            TopicApplier applier = new TopicApplier(admin, Duration.ofSeconds(30));
            for (Pipeline p : pipelines) {
                List<String> failures = applier.apply(applier.plan(TopicCatalog.bundled().withPrefix(p.topics)));
                if (!failures.isEmpty()) {
                    throw new IllegalStateException("could not create the bench topics: " + failures);
                }
            }
            try {
                out.printf("ingest: %d block entries in %d batches of %d blocks (%d tokens each) from %d engines%s%n",
                        measured.total, measured.total / BLOCKS_PER_BATCH, BLOCKS_PER_BATCH, BLOCK, engines,
                        warmUp == null ? "" : ", after a warm-up job of " + warmUp.total + " entries in the same JVM");

                // 1. A cold JVM's job, which is the warm-up: its backlog drained, the job cancelled, its view deleted.
                if (warmUp != null) {
                    out.println("cold: a fresh JVM's first job (the warm-up)");
                    warmUp.plan(false);
                    JobClient job = warmUp.start(producer, redis, out);
                    try {
                        warmUp.drain(redis).print(Double.NaN, out);
                    } finally {
                        job.cancel().get(60, TimeUnit.SECONDS);
                    }
                    deleteAll(redis, warmUp.view.prefix());
                }

                // 2. The ceiling: the measured entries written straight to Redis, pipelined, from one client.
                measured.plan(true);
                ViewLayout raw = new ViewLayout("bench-raw-" + id + ":");
                long memBefore = usedMemory(redis);
                Cpu rawCpu = Cpu.now(redis);
                long t0 = System.nanoTime();
                rawWrite(c, raw, measured.workload.entries);
                double rawSeconds = (System.nanoTime() - t0) / 1e9;
                Cpu rawSpent = Cpu.now(redis).minus(rawCpu);
                long rawBytes = usedMemory(redis) - memBefore;
                deleteAll(redis, raw.prefix());
                measured.workload.keepEntries = false;
                measured.workload.entries.clear();
                double rawRate = measured.total / rawSeconds;
                out.printf("%-44s %12.0f entries/s%n", "raw pipelined HSET, one client (ceiling)", rawRate);
                out.printf("%-44s %12.1f bytes/entry%n", "Redis memory per entry, raw layout", (double) rawBytes / measured.total);
                out.printf("%-44s %12.1f us/entry (Redis %.1f us/entry)%n", "CPU, the raw writer (this JVM)",
                        rawSpent.jvmMicros() / measured.total, rawSpent.redisMicros() / measured.total);

                // 3. The measured job, from empty state, on its own topics and view.
                out.println(warmUp == null ? "cold: a fresh JVM's first job" : "warm: a second job in the same JVM, from empty state");
                JobClient job = measured.start(producer, redis, out);
                try {
                    Drained drained = measured.drain(redis);
                    drained.print(rawRate, out);

                    // 4. Redis loses the view: every key of it deleted, as FLUSHALL or a Redis restarted empty
                    //    would (the job's probe finds its resynced_ms stamp gone), then every entry written again
                    //    from the job's state.
                    resync(c, redis, measured.view, measured.total, rawRate, out);

                    // 5. Freshness at half the measured rate: event time → visible in Redis.
                    freshness(producer, measured.config, c, measured.workload,
                            freshnessRate > 0 ? freshnessRate : drained.rate() / 2, freshness, out);
                } finally {
                    job.cancel().get(60, TimeUnit.SECONDS);
                }
                deleteAll(redis, measured.view.prefix());
            } finally {
                // The backlogs are tens of megabytes per million entries: not left behind on the broker.
                List<String> names = new ArrayList<>();
                for (Pipeline p : pipelines) {
                    TopicCatalog.bundled().withPrefix(p.topics).topics().forEach(t -> names.add(t.name()));
                }
                admin.deleteTopics(names).all().get(60, TimeUnit.SECONDS);
            }
        } finally {
            redisClient.shutdown();
            Directories.deleteRecursively(checkpoints);
        }
    }

    /** One job's topics, view, workload and backlog. */
    private static final class Pipeline {
        final String topics;
        final ViewLayout view;
        final Workload workload;
        final long total;
        final KvRouterJobConfig config;
        /** The backlog from {@link #plan} until it is produced; then each engine's last batch only. */
        private List<Planned> batches = List.of();
        /** Set by {@link #start}: when the job was submitted, and Redis's memory just before. */
        private long jobStart;
        private long memoryBeforeJob;

        Pipeline(StackAddresses stack, String name, int entries, int engines, Map<String, String> jobOptions) {
            this.topics = name + ".";
            this.view = new ViewLayout(name + ":");
            this.workload = new Workload(engines, view);
            this.total = (long) (entries / BLOCKS_PER_BATCH) * BLOCKS_PER_BATCH;
            Map<String, String> settings = new LinkedHashMap<>(Map.of(
                    "kafka.bootstrap", stack.kafkaBootstrap(), "schema-registry.url", stack.schemaRegistryUrl(),
                    "redis.url", stack.redisUrl(), "topics.prefix", topics, "kafka.group-id", topics + "job",
                    "kafka.starting-offsets", "earliest", "view.key-prefix", view.prefix(),
                    "engine.suspect-after", "5 min", "engine.dead-after", "10 min"));
            if (!stack.clientConfig().isEmpty()) {
                settings.put("client-config", stack.clientConfig());
            }
            settings.putAll(jobOptions);
            this.config = KvRouterJobConfig.from(settings);
        }

        /** Makes the backlog; {@code keepEntries}: the workload also keeps every entry, for the raw writer. */
        void plan(boolean keepEntries) {
            workload.keepEntries = keepEntries;
            batches = workload.batches((int) (total / BLOCKS_PER_BATCH), System.currentTimeMillis());
        }

        /** Produces the whole backlog (the engines' load reports first), then starts the job on it. */
        JobClient start(KafkaProducer<String, Object> producer, RedisCommands<String, String> redis, PrintStream out) throws Exception {
            for (String engine : workload.engineIds) {
                producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.ENGINE_LOAD), engine, load(engine)));
            }
            long p0 = System.nanoTime();
            for (Planned p : batches) {
                producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.KV_EVENTS), p.engine(), p.batch()));
            }
            producer.flush();
            batches = workload.lastPerEngine(batches);
            out.printf("  produced the backlog in %.1f s%n", (System.nanoTime() - p0) / 1e9);
            memoryBeforeJob = usedMemory(redis);
            StreamExecutionEnvironment env = KvRouterJob.environment(config);
            KvRouterJob.wire(env, config);
            jobStart = System.nanoTime();
            return env.executeAsync("bench ingest " + topics);
        }

        /** Waits for the backlog's last entries, timing the drain from the sink's first write (the meta key). */
        Drained drain(RedisCommands<String, String> redis) throws Exception {
            while (redis.exists(view.metaKey()) == 0) {
                bounded(jobStart, Duration.ofMinutes(3), "the view's meta key");
                Thread.sleep(5);
            }
            long steadyStart = System.nanoTime();
            Cpu cpu = Cpu.now(redis);
            ThreadCpu threads = ThreadCpu.now();
            awaitEntries(redis, batches, jobStart, "the last entries");
            double seconds = (System.nanoTime() - steadyStart) / 1e9;
            Cpu spent = Cpu.now(redis).minus(cpu);
            ThreadCpu threadsEnd = ThreadCpu.now();
            return new Drained(total, seconds, (System.nanoTime() - jobStart) / 1e9, usedMemory(redis) - memoryBeforeJob,
                    spent, threads, threadsEnd);
        }
    }

    /** What one drain measured. */
    private record Drained(long entries, double seconds, double allSeconds, long viewBytes, Cpu cpu, ThreadCpu threadsBefore,
                           ThreadCpu threadsAfter) {
        double rate() {
            return entries / seconds;
        }

        /** {@code rawRate}: the ceiling, NaN when not measured yet. */
        void print(double rawRate, PrintStream out) {
            out.printf("  %-42s %12.0f entries/s%s%n", "Kafka -> Flink -> Redis, from sink start", rate(),
                    Double.isNaN(rawRate) ? "" : String.format("  (%.0f %% of the ceiling)", 100 * rate() / rawRate));
            out.printf("  %-42s %12.1f s (job start to last entry, start-up included)%n", "whole backlog", allSeconds);
            out.printf("  %-42s %12.1f bytes/entry%n", "Redis memory per (block, engine) entry", (double) viewBytes / entries);
            out.printf("  %-42s %12.1f us/entry (Redis %.1f us/entry)%n", "CPU, the job over the drain (this JVM)",
                    cpu.jvmMicros() / entries, cpu.redisMicros() / entries);
            threadsAfter.printSince(threadsBefore, cpu.jvmMicros(), entries, out);
        }
    }

    /**
     * CPU time from process accounting, which a busy box does not move (unlike a rate): this JVM's
     * (the job runs in it, in a MiniCluster; during the drain nothing else of the bench works but a
     * poll every 20 ms) and the Redis server's own ({@code INFO cpu}, user + system).
     */
    private record Cpu(double jvmMicros, double redisMicros) {
        static Cpu now(RedisCommands<String, String> redis) {
            long jvmNanos = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                    .getProcessCpuTime();
            double redisSeconds = 0;
            for (String line : redis.info("cpu").split("\r?\n")) {
                if (line.startsWith("used_cpu_user:") || line.startsWith("used_cpu_sys:")) {
                    redisSeconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
                }
            }
            return new Cpu(jvmNanos / 1e3, redisSeconds * 1e6);
        }

        Cpu minus(Cpu before) {
            return new Cpu(jvmMicros - before.jvmMicros, redisMicros - before.redisMicros);
        }
    }

    /** Waits until every given batch's last entry is in Redis (bounded by the job's start). */
    private static void awaitEntries(RedisCommands<String, String> redis, List<Planned> batches, long jobStart, String what)
            throws InterruptedException {
        for (Planned last : batches) {
            while (redis.hexists(last.lastKey(), last.lastField()) == Boolean.FALSE) {
                bounded(jobStart, Duration.ofMinutes(10), what);
                Thread.sleep(20);
            }
        }
    }

    /**
     * CPU time of each of this JVM's threads (ThreadMXBean), grouped by what they run: a Flink task by
     * its chain's name (every subtask together), Lettuce's and Kafka's I/O threads by kind, so the
     * job's CPU per entry can be read operator by operator. The JIT compiler's and the garbage
     * collector's threads, which the JVM does not list, are read from {@code /proc/self/task} (Linux);
     * what is left of the process's CPU is the JVM's own (and, elsewhere than Linux, those two too).
     */
    private record ThreadCpu(Map<Long, Long> nanos, Map<Long, String> names, Map<String, Long> unlistedNanos) {
        private static final Pattern SUBTASK = Pattern.compile(" \\(\\d+/\\d+\\)#\\d+$");
        private static final String JIT = "the JIT compiler's threads";
        private static final String GC = "the garbage collector's threads";
        /** /proc reports CPU in USER_HZ ticks, 100 a second on every Linux the JDK runs on. */
        private static final long NANOS_PER_TICK = 10_000_000L;

        static ThreadCpu now() {
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            Map<Long, Long> nanos = new HashMap<>();
            Map<Long, String> names = new HashMap<>();
            for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
                long spent = info == null ? -1 : threads.getThreadCpuTime(info.getThreadId());
                if (spent >= 0) {
                    nanos.put(info.getThreadId(), spent);
                    names.put(info.getThreadId(), info.getThreadName());
                }
            }
            return new ThreadCpu(nanos, names, unlistedSoFar());
        }

        /** Nanoseconds per group since {@code before}; a thread started since counts from zero (one that ended is lost). */
        private Map<String, Long> nanosByGroupSince(ThreadCpu before) {
            Map<String, Long> groups = new HashMap<>();
            nanos.forEach((id, spent) -> groups.merge(group(names.get(id)), spent - before.nanos.getOrDefault(id, 0L), Long::sum));
            return groups;
        }

        static String group(String thread) {
            if (thread.startsWith("lettuce-")) {
                return "Lettuce I/O threads";
            }
            if (thread.startsWith("kafka-producer-network-thread")) {
                return "Kafka producers' I/O threads";
            }
            if (thread.startsWith("Source Data Fetcher")) {
                return "Kafka sources' fetchers";
            }
            if (thread.startsWith("AsyncOperations")) {
                return "asynchronous snapshots";
            }
            if (thread.startsWith("OutputFlusher for ") || thread.startsWith("Time Trigger for ")) {
                return "Flink's output flushers and sink timers";
            }
            Matcher task = SUBTASK.matcher(thread);
            return task.find() ? "task: " + thread.substring(0, task.start()) : "the bench's and Flink's own threads";
        }

        /**
         * Since {@code before}: the groups, largest first, those under 0.3 us/entry summed as one; then
         * the JIT compiler's and the collector's threads, and what no thread accounts for.
         */
        void printSince(ThreadCpu before, double processMicros, long entries, PrintStream out) {
            out.println("  of which, by thread (us/entry):");
            List<Map.Entry<String, Long>> sorted = new ArrayList<>(nanosByGroupSince(before).entrySet());
            sorted.sort(Map.Entry.<String, Long>comparingByValue().reversed());
            long threadsNanos = 0;
            long smallNanos = 0;
            for (Map.Entry<String, Long> g : sorted) {
                threadsNanos += g.getValue();
                if (g.getValue() / 1e3 / entries >= 0.3) {
                    String name = g.getKey().length() > 70 ? g.getKey().substring(0, 67) + "..." : g.getKey();
                    out.printf("    %-68s %6.1f%n", name, g.getValue() / 1e3 / entries);
                } else {
                    smallNanos += g.getValue();
                }
            }
            out.printf("    %-68s %6.1f%n", "every smaller group", smallNanos / 1e3 / entries);
            long jitNanos = -1;
            for (String unlisted : List.of(JIT, GC)) {
                if (unlistedNanos.containsKey(unlisted)) {
                    long spent = unlistedNanos.get(unlisted) - before.unlistedNanos.getOrDefault(unlisted, 0L);
                    threadsNanos += spent;
                    if (unlisted.equals(JIT)) {
                        jitNanos = spent;
                    }
                    out.printf("    %-68s %6.1f%n", unlisted + " (/proc)", spent / 1e3 / entries);
                }
            }
            out.printf("    %-68s %6.1f%n", unlistedNanos.isEmpty() ? "no listed thread's: the JIT, GC, the JVM's own"
                            : "no thread's above: the JVM's own (process less every thread)",
                    Math.max(0, processMicros - threadsNanos / 1e3) / entries);
            if (jitNanos >= 0) {
                // The compiler's work ends once the code is compiled; a drain of minutes does not see
                // it end on shared cores. Derived, so printed apart from what the process measured.
                out.printf("  %-42s %12.1f us/entry (derived: the job less the JIT compiler, whose work ends once the code is compiled)%n",
                        "CPU, the job once compiled", Math.max(0, processMicros - jitNanos / 1e3) / entries);
            }
        }

        /** CPU nanoseconds of the JIT compiler's and the collector's threads so far; empty where /proc is not. */
        private static Map<String, Long> unlistedSoFar() {
            Map<String, Long> groups = new HashMap<>();
            Path tasks = Path.of("/proc/self/task");
            if (!Files.isDirectory(tasks)) {
                return groups;
            }
            try (var each = Files.newDirectoryStream(tasks)) {
                for (Path task : each) {
                    try {
                        String comm = Files.readString(task.resolve("comm")).trim();
                        String group = comm.startsWith("C1 CompilerThre") || comm.startsWith("C2 CompilerThre") ? JIT
                                : comm.startsWith("GC Thread") || comm.startsWith("G1 ") ? GC : null;
                        if (group != null) {
                            // utime and stime are the 14th and 15th fields, the 12th and 13th after the name's ')'.
                            String stat = Files.readString(task.resolve("stat"));
                            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                            groups.merge(group, (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * NANOS_PER_TICK, Long::sum);
                        }
                    } catch (IOException | RuntimeException endedMeanwhile) {
                        // A compiler thread the JVM stopped between the listing and the read: its CPU is lost.
                    }
                }
            } catch (IOException unreadable) {
                return Map.of();
            }
            return groups;
        }
    }

    private static void freshness(KafkaProducer<String, Object> producer, KvRouterJobConfig config, StatefulRedisConnection<String, String> c,
                                  Workload w, double entriesPerSecond, Duration length, PrintStream out) throws Exception {
        Percentiles lag = new Percentiles();
        List<Planned> pending = new ArrayList<>();
        List<long[]> late = new ArrayList<>(); // event time, visible, of each sample over LATE_MS
        try (Stalls stalls = new Stalls(localDirectory(config.runtime().checkpointDir()))) {
            sampleFreshness(producer, config, c, w, entriesPerSecond, length, lag, pending, late, stalls);
            out.printf("freshness at %.0f entries/s, %d samples: p50 %.0f ms, p99 %.0f ms%s%n",
                    entriesPerSecond, lag.count(), lag.micros(0.5) / 1000, lag.micros(0.99) / 1000,
                    pending.isEmpty() ? "" : " (" + pending.size() + " samples never became visible within 30 s)");
            stalls.explain(late, out);
        }
    }

    private static void sampleFreshness(KafkaProducer<String, Object> producer, KvRouterJobConfig config,
                                        StatefulRedisConnection<String, String> c, Workload w, double entriesPerSecond,
                                        Duration length, Percentiles lag, List<Planned> pending, List<long[]> late, Stalls stalls)
            throws Exception {
        double batchesPerSecond = entriesPerSecond / BLOCKS_PER_BATCH;
        long intervalNanos = (long) (1e9 / batchesPerSecond);
        long start = System.nanoTime();
        long sampleFrom = start + LEAD_IN.toNanos();
        long next = start;
        int sent = 0;
        // Neither loop may spin: a busy producer or poller would take a core and Redis time from
        // the pipeline being measured. Sends are paced; the samples are polled once a millisecond.
        while (System.nanoTime() - sampleFrom < length.toNanos()) {
            long now = System.nanoTime();
            while (now >= next) {
                Planned p = w.batches(1, System.currentTimeMillis()).get(0);
                producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.KV_EVENTS), p.engine(), p.batch()));
                if (sent++ % 5 == 0 && now >= sampleFrom) {
                    pending.add(p);
                }
                next += intervalNanos;
            }
            collectVisible(c, pending, lag, late);
            stalls.look();
            Thread.sleep(1);
        }
        long drainUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!pending.isEmpty() && System.nanoTime() < drainUntil) {
            collectVisible(c, pending, lag, late);
            Thread.sleep(1);
        }
    }

    /** The job's checkpoint directory where it is a local one (the bench's own, unless -D job.checkpoint-dir says otherwise); else null. */
    private static Path localDirectory(String uri) {
        try {
            URI parsed = URI.create(uri);
            return "file".equals(parsed.getScheme()) ? Path.of(parsed) : null;
        } catch (IllegalArgumentException notAUri) {
            return null;
        }
    }

    /** A sample later than this is explained by what it waited through. */
    private static final long LATE_MS = 100;
    /**
     * The freshness run produces this long before it samples: it follows the view's flush and
     * rewrite, whose wake (the changelog of a million entries, the collector) is not the steady state.
     */
    private static final Duration LEAD_IN = Duration.ofSeconds(3);

    /** Samples checked per poll, oldest first: bounded, so a stalled pipeline does not make the poll a load of its own. */
    private static final int CHECKED_PER_POLL = 64;

    /**
     * Takes every sample now visible out of {@code pending}, whatever its place: the engines'
     * partitions do not drain in step, so a sample behind a late one is timed when it shows up, not
     * when the late one does. One pipelined round trip of HEXISTS.
     */
    private static void collectVisible(StatefulRedisConnection<String, String> c, List<Planned> pending, Percentiles lag,
                                       List<long[]> late) throws Exception {
        if (pending.isEmpty()) {
            return;
        }
        List<Planned> checked = new ArrayList<>(pending.subList(0, Math.min(CHECKED_PER_POLL, pending.size())));
        List<RedisFuture<Boolean>> answers = new ArrayList<>(checked.size());
        var async = c.async();
        c.setAutoFlushCommands(false);
        try {
            for (Planned p : checked) {
                answers.add(async.hexists(p.lastKey(), p.lastField()));
            }
            c.flushCommands();
        } finally {
            c.setAutoFlushCommands(true);
        }
        for (int i = 0; i < checked.size(); i++) {
            if (answers.get(i).get(10, TimeUnit.SECONDS) == Boolean.TRUE) {
                sample(checked.get(i), lag, late);
                Planned visible = checked.get(i);
                pending.removeIf(p -> p == visible);
            }
        }
    }

    private static void sample(Planned visible, Percentiles lag, List<long[]> late) {
        long now = System.currentTimeMillis();
        long eventTime = visible.batch().getTsMs();
        lag.add((now - eventTime) * 1_000_000L);
        if (now - eventTime > LATE_MS) {
            late.add(new long[] {eventTime, now});
        }
    }

    /**
     * What a late freshness sample may have waited through, as wall-clock instants: the collector's
     * pauses (the JVM's notifications; the job runs in this JVM) and checkpoints (each one's directory
     * appears under the checkpoint directory when it is triggered; looked for every 50 ms).
     */
    private static final class Stalls implements AutoCloseable {
        /** Pauses this long or longer count. */
        private static final long PAUSE_MS = 10;
        /** A pause counts for a sample whose event time is this soon after it ended (the backlog it left), or earlier. */
        private static final long PAUSE_REACH_MS = 1000;
        /** A checkpoint counts for a sample whose event time is this soon before it started, or later. */
        private static final long CHECKPOINT_REACH_MS = 1000;
        /** Where checkpoints are looked for; null: not watched (not a local directory). */
        private final Path checkpoints;
        private final List<long[]> pauses = Collections.synchronizedList(new ArrayList<>()); // start, end
        private final Map<String, Long> checkpointStarts = new HashMap<>();
        private final List<Runnable> removals = new ArrayList<>();
        private long lastLook;

        Stalls(Path checkpoints) throws IOException {
            this.checkpoints = checkpoints;
            look(0); // checkpoints begun before: at time 0, which no sample reaches
            long jvmStart = ManagementFactory.getRuntimeMXBean().getStartTime();
            for (var gc : ManagementFactory.getGarbageCollectorMXBeans()) {
                if (gc instanceof NotificationEmitter emitter) {
                    NotificationListener listener = (notification, handback) -> {
                        if (GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(notification.getType())) {
                            var info = GarbageCollectionNotificationInfo.from(
                                    (CompositeData) notification.getUserData());
                            // A concurrent cycle (a collector that says so in its name) is no pause.
                            if (!info.getGcName().contains("Concurrent") && info.getGcInfo().getDuration() >= PAUSE_MS) {
                                pauses.add(new long[] {jvmStart + info.getGcInfo().getStartTime(), jvmStart + info.getGcInfo().getEndTime()});
                            }
                        }
                    };
                    emitter.addNotificationListener(listener, null, null);
                    removals.add(() -> {
                        try {
                            emitter.removeNotificationListener(listener);
                        } catch (ListenerNotFoundException gone) {
                            // already removed
                        }
                    });
                }
            }
        }

        /** Notes the checkpoints triggered since the last look (at most every 50 ms). */
        void look() throws IOException {
            long now = System.currentTimeMillis();
            if (now - lastLook >= 50) {
                lastLook = now;
                look(now);
            }
        }

        private void look(long now) throws IOException {
            if (checkpoints == null || !Files.isDirectory(checkpoints)) {
                return;
            }
            try (var jobs = Files.newDirectoryStream(checkpoints)) {
                for (Path job : jobs) {
                    if (Files.isDirectory(job)) {
                        try (var each = Files.newDirectoryStream(job, "chk-*")) {
                            each.forEach(chk -> checkpointStarts.putIfAbsent(chk.toString(), now));
                        }
                    }
                }
            }
        }

        @Override
        public void close() {
            removals.forEach(Runnable::run);
        }

        void explain(List<long[]> late, PrintStream out) {
            List<long[]> seen;
            synchronized (pauses) {
                seen = new ArrayList<>(pauses);
            }
            int pause = 0;
            int checkpoint = 0;
            int both = 0;
            for (long[] sample : late) {
                boolean inPause = seen.stream().anyMatch(p -> p[1] + PAUSE_REACH_MS > sample[0] && p[0] < sample[1]);
                boolean afterCheckpoint = checkpointStarts.values().stream()
                        .anyMatch(t -> t >= sample[0] - CHECKPOINT_REACH_MS && t <= sample[1]);
                both += inPause && afterCheckpoint ? 1 : 0;
                pause += inPause && !afterCheckpoint ? 1 : 0;
                checkpoint += afterCheckpoint && !inPause ? 1 : 0;
            }
            long longest = seen.stream().mapToLong(p -> p[1] - p[0]).max().orElse(0);
            out.printf("  samples over %d ms: %d — after a collector pause (ended up to %d ms before the event) only %d, after a "
                            + "checkpoint began (up to %d ms before the event) only %d, both %d, neither %d; pauses of %d ms or more: "
                            + "%d (longest %d ms), checkpoints begun: %s%n",
                    LATE_MS, late.size(), PAUSE_REACH_MS, pause, CHECKPOINT_REACH_MS, checkpoint, both,
                    late.size() - pause - checkpoint - both, PAUSE_MS, seen.size(), longest,
                    checkpoints == null ? "not watched (not a local directory)"
                            : Long.toString(checkpointStarts.values().stream().filter(t -> t > 0).count()));
        }
    }

    private static void resync(StatefulRedisConnection<String, String> c, RedisCommands<String, String> redis, ViewLayout view,
                               long total, double rawRate, PrintStream out) throws Exception {
        // The meta key last: its stamp gone is what the job notices, and a job that began writing the
        // view again while the bench still deleted would see its writes deleted behind it.
        deleteAll(redis, view.prefix(), view.metaKey());
        redis.del(view.metaKey());
        long start = System.nanoTime();
        long back;
        while ((back = blockEntries(c, view)) < total) {
            bounded(start, Duration.ofMinutes(2), "the view written again from state (" + back + " of " + total + " entries back)");
            Thread.sleep(50);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        out.printf("%-44s %12.1f s for %d entries (%.0f entries/s, %.0f %% of the ceiling; the job looks at Redis once a second)%n",
                "view back after its keys were flushed", seconds, back, back / seconds, 100 * back / seconds / rawRate);
    }

    /** Block entries in the view: its group keys' fields, counted with pipelined HLENs. */
    private static long blockEntries(StatefulRedisConnection<String, String> c, ViewLayout view) throws Exception {
        List<String> keys = new ArrayList<>();
        ScanIterator.scan(c.sync(), ScanArgs.Builder.matches(view.prefix() + "g:*").limit(1000)).forEachRemaining(keys::add);
        var async = c.async();
        List<RedisFuture<Long>> lengths = new ArrayList<>(keys.size());
        c.setAutoFlushCommands(false);
        try {
            for (String key : keys) {
                lengths.add(async.hlen(key));
            }
            c.flushCommands();
        } finally {
            c.setAutoFlushCommands(true);
        }
        long entries = 0;
        for (RedisFuture<Long> length : lengths) {
            entries += length.get(10, TimeUnit.SECONDS);
        }
        return entries;
    }

    /** Engines, their prompts, and every canonical entry the batches will produce. */
    private static final class Workload {
        final List<String> engineIds = new ArrayList<>();
        final List<String[]> entries = new ArrayList<>(); // key, field, value; only while keepEntries
        boolean keepEntries;
        private final ViewLayout view;
        private final CanonicalBlockHasher hasher = new CanonicalBlockHasher(BLOCK);
        private final Random random = new Random(11);
        private final long[] seq;
        private int turn;

        Workload(int engines, ViewLayout view) {
            this.view = view;
            this.seq = new long[engines];
            for (int e = 0; e < engines; e++) {
                engineIds.add("bench-engine-" + e);
            }
        }

        /** {@code count} batches, round-robin over engines; each prompt spans BATCHES_PER_PROMPT batches. */
        List<Planned> batches(int count, long tsMs) {
            List<Planned> out = new ArrayList<>(count);
            while (out.size() < count) {
                int e = turn++ % engineIds.size();
                String engine = engineIds.get(e);
                int[] prompt = random.ints(BLOCK * BLOCKS_PER_BATCH * BATCHES_PER_PROMPT, 0, 100_000).toArray();
                long[] chain = hasher.chain(MODEL, null, prompt, List.of());
                for (int b = 0; b < BATCHES_PER_PROMPT && out.size() < count; b++) {
                    List<ByteBuffer> hashes = new ArrayList<>();
                    List<Integer> tokens = new ArrayList<>();
                    for (int k = b * BLOCKS_PER_BATCH; k < (b + 1) * BLOCKS_PER_BATCH; k++) {
                        hashes.add(BlockHashes.ofUnsigned64(chain[k] ^ e));
                        for (int t = k * BLOCK; t < (k + 1) * BLOCK; t++) {
                            tokens.add(prompt[t]);
                        }
                        if (keepEntries) {
                            entries.add(new String[] {view.groupKey(ViewLayout.tag(chain, k + 1, 2)), ViewLayout.hex(chain[k]),
                                    ViewLayout.holder(engine, tsMs, 0)});
                        }
                    }
                    BlockStored stored = BlockStored.newBuilder().setBlockHashes(hashes)
                            .setParentBlockHash(b == 0 ? null : BlockHashes.ofUnsigned64(chain[b * BLOCKS_PER_BATCH - 1] ^ e))
                            .setTokenIds(tokens).setBlockSize(BLOCK).setMedium("GPU").build();
                    KvEventBatch batch = KvEventBatch.newBuilder().setEngineId(engine).setModel(MODEL).setSeq(seq[e]++)
                            .setTsMs(tsMs).setEvents(List.of(stored)).build();
                    int last = (b + 1) * BLOCKS_PER_BATCH - 1;
                    out.add(new Planned(engine, batch, view.groupKey(ViewLayout.tag(chain, last + 1, 2)), ViewLayout.hex(chain[last])));
                }
            }
            return out;
        }

        List<Planned> lastPerEngine(List<Planned> plan) {
            Map<String, Planned> last = new LinkedHashMap<>();
            plan.forEach(p -> last.put(p.engine(), p));
            return new ArrayList<>(last.values());
        }
    }

    private static void rawWrite(StatefulRedisConnection<String, String> c, ViewLayout raw, List<String[]> entries) throws Exception {
        var async = c.async();
        c.setAutoFlushCommands(false);
        try {
            List<RedisFuture<?>> batch = new ArrayList<>(1000);
            String from = entries.get(0)[0].substring(0, entries.get(0)[0].indexOf("g:{"));
            for (String[] e : entries) {
                batch.add(async.hset(raw.prefix() + e[0].substring(from.length()), e[1], e[2]));
                if (batch.size() == 1000) {
                    c.flushCommands();
                    for (RedisFuture<?> f : batch) {
                        f.get(10, TimeUnit.SECONDS);
                    }
                    batch.clear();
                }
            }
            c.flushCommands();
            for (RedisFuture<?> f : batch) {
                f.get(10, TimeUnit.SECONDS);
            }
        } finally {
            c.setAutoFlushCommands(true);
        }
    }

    private static long usedMemory(RedisCommands<String, String> redis) {
        for (String line : redis.info("memory").split("\r?\n")) {
            if (line.startsWith("used_memory:")) {
                return Long.parseLong(line.substring("used_memory:".length()).trim());
            }
        }
        throw new IllegalStateException("INFO memory has no used_memory");
    }

    private static void deleteAll(RedisCommands<String, String> redis, String prefix, String... except) {
        ScanIterator<String> keys = ScanIterator.scan(redis, ScanArgs.Builder.matches(prefix + "*").limit(1000));
        List<String> kept = List.of(except);
        List<String> batch = new ArrayList<>();
        while (keys.hasNext()) {
            String key = keys.next();
            if (!kept.contains(key)) {
                batch.add(key);
            }
            if (batch.size() == 1000) {
                redis.del(batch.toArray(String[]::new));
                batch.clear();
            }
        }
        if (!batch.isEmpty()) {
            redis.del(batch.toArray(String[]::new));
        }
    }

    private static void bounded(long startNanos, Duration limit, String what) {
        if (System.nanoTime() - startNanos > limit.toNanos()) {
            throw new IllegalStateException(what + " did not reach Redis within " + limit);
        }
    }

    private static EngineLoad load(String engine) {
        return EngineLoad.newBuilder().setEngineId(engine).setModel(MODEL).setTsMs(System.currentTimeMillis())
                .setWaiting(0).setRunning(1).setKvBlocksUsed(0).setKvBlocksCapacity(1_000_000)
                .setLifecycle(EngineLifecycle.READY).build();
    }

    private static KafkaProducer<String, Object> producer(StackAddresses stack, ClientConfig client) {
        return new KafkaProducer<>(KafkaClients.serdeConfig(client, Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.kafkaBootstrap(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, RegistryAvroSerializer.class,
                ProducerConfig.LINGER_MS_CONFIG, 5,
                RegistrySettings.URL, stack.schemaRegistryUrl())));
    }
}
