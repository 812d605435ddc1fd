package dev.kvrouter.cli.bench;

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
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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

    static void run(StackAddresses stack, int entries, int engines, Duration freshness, double freshnessRate,
                    Map<String, String> jobOptions, PrintStream out) throws Exception {
        String id = UUID.randomUUID().toString().substring(0, 8);
        String topics = "bench-" + id + ".";
        String viewPrefix = "bench-" + id + ":";
        ClientConfig client = stack.client();
        try (Admin admin = Admin.create(KafkaClients.config(client, Map.of("bootstrap.servers", stack.kafkaBootstrap())))) {
            TopicApplier applier = new TopicApplier(admin, Duration.ofSeconds(30));
            List<String> failures = applier.apply(applier.plan(TopicCatalog.bundled().withPrefix(topics)));
            if (!failures.isEmpty()) {
                throw new IllegalStateException("could not create the bench topics: " + failures);
            }
        }
        ViewLayout view = new ViewLayout(viewPrefix);
        Workload w = new Workload(engines, view);
        List<Planned> plan = w.batches(entries / BLOCKS_PER_BATCH, System.currentTimeMillis());
        long total = (long) plan.size() * BLOCKS_PER_BATCH;
        out.printf("ingest: %d block entries in %d batches of %d blocks (%d tokens each) from %d engines%n",
                total, plan.size(), BLOCKS_PER_BATCH, BLOCK, engines);

        RedisClient redisClient = RedisSecurity.fromConfig(client.redis()).standaloneClient(stack.redisUrl());
        // The job's checkpoints (and state changelog) for this run only: removed when it ends.
        java.nio.file.Path checkpoints = java.nio.file.Files.createTempDirectory("kvr-bench-checkpoints");
        try (StatefulRedisConnection<String, String> c = redisClient.connect()) {
            RedisCommands<String, String> redis = c.sync();

            // 1. The ceiling: the same entries written straight to Redis, pipelined, from one client.
            ViewLayout raw = new ViewLayout("bench-raw-" + id + ":");
            long memBefore = usedMemory(redis);
            Cpu rawCpu = Cpu.now(redis);
            long t0 = System.nanoTime();
            rawWrite(c, raw, w.entries);
            double rawSeconds = (System.nanoTime() - t0) / 1e9;
            Cpu rawSpent = Cpu.now(redis).minus(rawCpu);
            long rawBytes = usedMemory(redis) - memBefore;
            deleteAll(redis, raw.prefix());

            // 2. The pipeline: the batches produced first, then the job drains the backlog.
            Map<String, String> settings = new java.util.LinkedHashMap<>(Map.of(
                    "kafka.bootstrap", stack.kafkaBootstrap(), "schema-registry.url", stack.schemaRegistryUrl(),
                    "redis.url", stack.redisUrl(), "topics.prefix", topics, "kafka.group-id", topics + "job",
                    "kafka.starting-offsets", "earliest", "view.key-prefix", viewPrefix,
                    "engine.suspect-after", "5 min", "engine.dead-after", "10 min"));
            settings.put("job.checkpoint-dir", checkpoints.toUri().toString());
            if (!stack.clientConfig().isEmpty()) {
                settings.put("client-config", stack.clientConfig());
            }
            settings.putAll(jobOptions);
            KvRouterJobConfig config = KvRouterJobConfig.from(settings);
            try (KafkaProducer<String, Object> producer = producer(stack, client)) {
                for (String engine : w.engineIds) {
                    producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.ENGINE_LOAD), engine, load(engine)));
                }
                long p0 = System.nanoTime();
                for (Planned p : plan) {
                    producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.KV_EVENTS), p.engine(), p.batch()));
                }
                producer.flush();
                out.printf("produced the backlog in %.1f s%n", (System.nanoTime() - p0) / 1e9);

                long memBeforeView = usedMemory(redis);
                StreamExecutionEnvironment env = KvRouterJob.environment(config);
                KvRouterJob.wire(env, config);
                long jobStart = System.nanoTime();
                JobClient job = env.executeAsync("bench ingest");
                try {
                    // The clock starts when the sink is up (its first flush writes the meta key), so the
                    // rate covers everything after start-up: decoding, state, and the Redis writes.
                    while (redis.exists(view.metaKey()) == 0) {
                        bounded(jobStart, Duration.ofMinutes(3), "the view's meta key");
                        Thread.sleep(5);
                    }
                    long steadyStart = System.nanoTime();
                    Cpu drainCpu = Cpu.now(redis);
                    ThreadCpu drainThreads = ThreadCpu.now();
                    awaitEntries(redis, w.lastPerEngine(plan), jobStart, "the last entries");
                    double steadySeconds = (System.nanoTime() - steadyStart) / 1e9;
                    Cpu drainSpent = Cpu.now(redis).minus(drainCpu);
                    ThreadCpu drainEnd = ThreadCpu.now();
                    double allSeconds = (System.nanoTime() - jobStart) / 1e9;
                    long viewBytes = usedMemory(redis) - memBeforeView;
                    double rawRate = total / rawSeconds;
                    double pipelineRate = total / steadySeconds;
                    out.printf("%-44s %12.0f entries/s%n", "raw pipelined HSET, one client (ceiling)", rawRate);
                    out.printf("%-44s %12.0f entries/s  (%.0f %% of the ceiling)%n", "Kafka -> Flink -> Redis, from sink start",
                            pipelineRate, 100 * pipelineRate / rawRate);
                    out.printf("%-44s %12.1f s (job start to last entry, start-up included)%n", "whole backlog", allSeconds);
                    out.printf("%-44s %12.1f bytes/entry (raw layout: %.1f)%n", "Redis memory per (block, engine) entry",
                            (double) viewBytes / total, (double) rawBytes / total);
                    out.printf("%-44s %12.1f us/entry (Redis %.1f us/entry)%n", "CPU, the job over the drain (this JVM)",
                            drainSpent.jvmMicros() / total, drainSpent.redisMicros() / total);
                    drainEnd.printSince(drainThreads, drainSpent.jvmMicros(), total, out);
                    out.printf("%-44s %12.1f us/entry (Redis %.1f us/entry)%n", "CPU, the raw writer (this JVM)",
                            rawSpent.jvmMicros() / total, rawSpent.redisMicros() / total);

                    // 3. Redis loses the view: every key of it deleted, as FLUSHALL or a Redis restarted empty
                    //    would (the job's probe finds its resynced_ms stamp gone), then every entry written again
                    //    from the job's state.
                    resync(c, redis, view, total, rawRate, out);

                    // 4. Freshness at half the measured rate: event time → visible in Redis.
                    freshness(producer, config, redis, w, freshnessRate > 0 ? freshnessRate : pipelineRate / 2, freshness, out);
                } finally {
                    job.cancel().get(60, TimeUnit.SECONDS);
                }
            }
            deleteAll(redis, viewPrefix);
        } finally {
            redisClient.shutdown();
            Directories.deleteRecursively(checkpoints);
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
     * job's CPU per entry can be read operator by operator. What no thread accounts for — garbage
     * collection, the JIT compiler, the JVM's own — is the process's CPU less the threads' sum; the
     * compiler's and the collectors' own elapsed milliseconds are kept beside it.
     */
    private record ThreadCpu(Map<Long, Long> nanos, Map<Long, String> names, long compileMs, long gcMs) {
        private static final Pattern SUBTASK = Pattern.compile(" \\(\\d+/\\d+\\)#\\d+$");

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
            return new ThreadCpu(nanos, names, compileMsSoFar(), gcMsSoFar());
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
         * what no thread accounts for, with the JIT compiler's and the collector's elapsed time beside
         * it (their own accounting, wall milliseconds: they run on threads the JVM hides).
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
            out.printf("    %-68s %6.1f  (JIT compiling %d ms, GC %d ms)%n", "no thread's: JIT, GC, the JVM's own (process less threads)",
                    Math.max(0, processMicros - threadsNanos / 1e3) / entries, compileMs - before.compileMs, gcMs - before.gcMs);
        }

        /** Milliseconds the JIT compiler and the garbage collectors report so far. */
        private static long compileMsSoFar() {
            var jit = ManagementFactory.getCompilationMXBean();
            return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : 0;
        }

        private static long gcMsSoFar() {
            long ms = 0;
            for (var gc : ManagementFactory.getGarbageCollectorMXBeans()) {
                ms += Math.max(0, gc.getCollectionTime());
            }
            return ms;
        }
    }

    private static void freshness(KafkaProducer<String, Object> producer, KvRouterJobConfig config, RedisCommands<String, String> redis,
                                  Workload w, double entriesPerSecond, Duration length, PrintStream out) throws Exception {
        double batchesPerSecond = entriesPerSecond / BLOCKS_PER_BATCH;
        long intervalNanos = (long) (1e9 / batchesPerSecond);
        Percentiles lag = new Percentiles();
        List<Planned> pending = new ArrayList<>();
        long start = System.nanoTime();
        long next = start;
        int sent = 0;
        // Neither loop may spin: a busy producer or poller would take a core and Redis time from
        // the pipeline being measured. Sends are paced; each sample is polled once a millisecond.
        while (System.nanoTime() - start < length.toNanos()) {
            long now = System.nanoTime();
            while (now >= next) {
                Planned p = w.batches(1, System.currentTimeMillis()).get(0);
                producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.KV_EVENTS), p.engine(), p.batch()));
                if (sent++ % 5 == 0) {
                    pending.add(p);
                }
                next += intervalNanos;
            }
            while (!pending.isEmpty() && redis.hexists(pending.get(0).lastKey(), pending.get(0).lastField()) == Boolean.TRUE) {
                lag.add((System.currentTimeMillis() - pending.get(0).batch().getTsMs()) * 1_000_000L);
                pending.remove(0);
            }
            Thread.sleep(1);
        }
        long drainUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!pending.isEmpty() && System.nanoTime() < drainUntil) {
            if (redis.hexists(pending.get(0).lastKey(), pending.get(0).lastField()) == Boolean.TRUE) {
                lag.add((System.currentTimeMillis() - pending.get(0).batch().getTsMs()) * 1_000_000L);
                pending.remove(0);
            } else {
                Thread.sleep(1);
            }
        }
        out.printf("freshness at %.0f entries/s, %d samples: p50 %.0f ms, p99 %.0f ms%s%n",
                entriesPerSecond, lag.count(), lag.micros(0.5) / 1000, lag.micros(0.99) / 1000,
                pending.isEmpty() ? "" : " (" + pending.size() + " samples never became visible within 30 s)");
    }

    private static void resync(StatefulRedisConnection<String, String> c, RedisCommands<String, String> redis, ViewLayout view,
                               long total, double rawRate, PrintStream out) throws Exception {
        deleteAll(redis, view.prefix());
        long start = System.nanoTime();
        long back;
        while ((back = blockEntries(c, view)) < total) {
            bounded(start, Duration.ofMinutes(2), "the view written again from state");
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
        final List<String[]> entries = new ArrayList<>(); // key, field, value
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
                        entries.add(new String[] {view.groupKey(ViewLayout.tag(chain, k + 1, 2)), ViewLayout.hex(chain[k]),
                                ViewLayout.holder(engine, tsMs, 0)});
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
            Map<String, Planned> last = new java.util.LinkedHashMap<>();
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

    private static void deleteAll(RedisCommands<String, String> redis, String prefix) {
        ScanIterator<String> keys = ScanIterator.scan(redis, ScanArgs.Builder.matches(prefix + "*").limit(1000));
        List<String> batch = new ArrayList<>();
        while (keys.hasNext()) {
            batch.add(keys.next());
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
