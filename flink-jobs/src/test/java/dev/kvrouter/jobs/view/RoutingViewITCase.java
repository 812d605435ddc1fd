package dev.kvrouter.jobs.view;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.balancer.KvRouterClient;
import dev.kvrouter.balancer.KvRouterClient.Pick;
import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.common.TopicNames;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.dlq.DeadLetter;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.events.OutcomeStatus;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RouteReason;
import dev.kvrouter.events.RoutingDecision;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.replicas.ReplicationRecommendation;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.LocalStackExtension;
import dev.kvrouter.stack.junit.UniqueNames;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The routing-view job in a MiniCluster against the real stack: events in through Kafka, answers
 * read with {@code kvr_pick} through the Java balancer client. Each test uses its own engines and
 * prompts on one running job.
 */
@ExtendWith(LocalStackExtension.class)
class RoutingViewITCase {

    @RegisterExtension
    static final MiniClusterExtension FLINK = ViewTestSupport.miniCluster(2);

    private static final CanonicalBlockHasher HASHER = new CanonicalBlockHasher(16);

    private static KvRouterJobConfig config;
    private static JobClient job;
    private static KafkaProducer<String, Object> producer;
    private static KafkaProducer<String, byte[]> rawProducer;
    private static KvRouterClient router;
    private static final Set<FakeEngine> ALIVE = ConcurrentHashMap.newKeySet();
    private static final Map<FakeEngine, int[]> LOADS = new ConcurrentHashMap<>();
    private static ScheduledExecutorService heartbeats;
    private static StackAddresses stack;

    @BeforeAll
    static void startJob(StackAddresses addresses) throws Exception {
        stack = addresses;
        String prefix = ViewTestSupport.topics(stack, "it-view");
        config = ViewTestSupport.config(stack, prefix, stack.redisUrl(),
                "engine.suspect-after", "3 s",
                "engine.dead-after", "6 s",
                "engine.queue-cap", "8",
                "engine.update-interval", "0 ms",
                "ratios.hot-at", "3",
                "ratios.warm-at", "2",
                "replicas.interval", "1 s");
        StreamExecutionEnvironment env = KvRouterJob.environment(config);
        KvRouterJob.wire(env, config);
        job = env.executeAsync("routing view ITCase");

        producer = ViewTestSupport.producer(stack);
        rawProducer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.kafkaBootstrap(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 4 * 1024 * 1024));
        // Observing: the tests ask again and again while the view catches up; those answers are not requests sent.
        router = new KvRouterClient(KvRouterClient.Options.defaults(stack.redisUrl())
                .withKeyPrefix(config.view().keyPrefix()).observing().withMaxViewAge(Duration.ofSeconds(10)));
        heartbeats = Executors.newSingleThreadScheduledExecutor();
        heartbeats.scheduleWithFixedDelay(() -> ALIVE.forEach(e -> {
            int[] load = LOADS.getOrDefault(e, new int[] {0, 1});
            producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.ENGINE_LOAD), e.id, e.load(load[0], load[1])));
        }), 0, 300, TimeUnit.MILLISECONDS);
    }

    @AfterAll
    static void stopJob() throws Exception {
        if (heartbeats != null) {
            heartbeats.shutdownNow();
        }
        if (job != null) {
            job.cancel().get(30, TimeUnit.SECONDS);
        }
        if (router != null) {
            router.close();
        }
        if (producer != null) {
            producer.close();
            rawProducer.close();
        }
    }

    @Test
    void aSlowEnginesPrefillRateShowsInTheEngineTableFromItsChunksBeforeAnyOutcome() throws Exception {
        // Chunked prefill, 2 048 tokens a chunk (128 blocks of 16): each chunk 820 ms after the one before, a
        // quarter of the configured 10 000 tokens/s. No request has finished: no outcome says anything yet.
        FakeEngine slow = alive("slow-chunks");
        int[] prompt = tokens(91, 3 * 2_048);
        for (int chunk = 0; chunk < 3; chunk++) {
            if (chunk > 0) {
                Thread.sleep(820);
            }
            send(slow, slow.batch(slow.stored(prompt, chunk * 128, (chunk + 1) * 128)));
        }
        // Two chunks of 2 048 tokens in 1.64 s, with the prior's 250 ms at 10 000 tokens/s: about 3 500 tokens/s.
        long deadline = System.nanoTime() + ViewTestSupport.WAIT.toNanos();
        int rate = 0;
        while (System.nanoTime() < deadline) {
            router.refresh();
            dev.kvrouter.contract.EngineEntry e = router.engines().get(slow.id);
            rate = e == null ? 0 : e.prefillTokensPerS();
            if (rate > 0 && rate < 5_000) {
                break;
            }
            Thread.sleep(100);
        }
        assertThat(rate).as("the slow engine's prefill rate in the view, tokens/s").isBetween(2_500, 4_500);
    }

    @Test
    void withNoDecisionsOrOutcomesAtAllAffinityIsOnForEveryClass() throws Exception {
        // Balancers that publish nothing (no decisions, no outcomes): the job has no evidence about any class,
        // and needs none. It writes no class switch; every class's request goes to its prompt's holder.
        FakeEngine holder = alive("evidence-free");
        int[] prompt = tokens(77, 64);
        send(holder, holder.batch(holder.stored(prompt, 0, 4)));
        long[] chain = HASHER.chain(FakeEngine.MODEL, null, prompt, List.of());
        for (String prefixClass : new String[] {null, "one-shot", "long-prefix"}) {
            Pick p = await(() -> router.pick(chain, prefixClass), x -> x.matchedBlocks() == 4);
            assertThat(p).extracting(Pick::engineId, Pick::reason).as(String.valueOf(prefixClass)).containsExactly(holder.id, "AFFINITY");
        }
        io.lettuce.core.RedisClient redis = io.lettuce.core.RedisClient.create(stack.redisUrl());
        try (var c = redis.connect()) {
            assertThat(c.sync().exists(new ViewLayout(config.view().keyPrefix()).classesKey())).isZero();
        } finally {
            redis.shutdown();
        }
    }

    @Test
    void theLongestConsecutivePrefixWinsAndBlockRemovedRemoves() throws Exception {
        FakeEngine a = alive("a");
        FakeEngine b = alive("b");
        int[] prompt = tokens(1, 64);
        send(a, a.batch(a.stored(prompt, 0, 2)));
        send(a, a.batch(a.stored(prompt, 2, 4)));
        send(b, b.batch(b.stored(prompt, 0, 2)));
        long[] chain = HASHER.chain(FakeEngine.MODEL, null, prompt, List.of());

        Pick p = await(() -> router.pick(chain), x -> x.matchedBlocks() == 4);
        assertThat(p).extracting(Pick::engineId, Pick::reason).containsExactly(a.id, "AFFINITY");
        // The cost view from the job's default model: 64 tokens at 10 000 prefill tokens/s, unpriced.
        assertThat(p.saving()).isEqualTo(new dev.kvrouter.balancer.PickPolicy.Saving("HIT", 64, 0.0, 6.4));

        send(a, a.batch(a.removed(prompt, 2, 4)));
        Pick after = await(() -> router.pick(chain), x -> x.matchedBlocks() == 2);
        assertThat(after.engineId()).isIn(a.id, b.id);
        assertThat(after.reason()).isEqualTo("AFFINITY");
    }

    @Test
    void allBlocksClearedAndASequenceResetDropTheEnginesEntries() throws Exception {
        FakeEngine c = alive("c");
        FakeEngine d = alive("d");
        int[] q = tokens(2, 48);
        int[] r = tokens(3, 48);
        long[] qChain = HASHER.chain(FakeEngine.MODEL, null, q, List.of());
        long[] rChain = HASHER.chain(FakeEngine.MODEL, null, r, List.of());
        send(c, c.batch(c.stored(q, 0, 3)));
        send(d, d.batch(d.stored(r, 0, 3)));
        await(() -> router.pick(qChain), x -> x.engineId().equals(c.id) && x.matchedBlocks() == 3);
        await(() -> router.pick(rChain), x -> x.engineId().equals(d.id) && x.matchedBlocks() == 3);

        send(c, c.batch(FakeEngine.cleared()));
        assertThat(await(() -> router.pick(qChain), x -> x.matchedBlocks() == 0).reason()).isEqualTo("COLD");

        send(d, d.batchWithSeq(0)); // the engine restarted: its sequence starts again at 0
        assertThat(await(() -> router.pick(rChain), x -> x.matchedBlocks() == 0).reason()).isEqualTo("COLD");
    }

    /** Fault e of the recovery table: batches read twice (a replay after a restore, a retry) or overtaken change nothing. */
    @Test
    void duplicateAndOutOfOrderBatchesAreCountedAndIgnoredAndTheEntriesStay() throws Exception {
        FakeEngine e = alive("dup");
        int[] prompt = tokens(9, 64);
        long[] chain = HASHER.chain(FakeEngine.MODEL, null, prompt, List.of());
        KvEventBatch first = e.batch(e.stored(prompt, 0, 2));
        Thread.sleep(5); // the second batch is stamped later, as an engine stamps them
        KvEventBatch second = e.batch(e.stored(prompt, 2, 4));
        send(e, first);
        send(e, second);
        await(() -> router.pick(chain), x -> x.engineId().equals(e.id) && x.matchedBlocks() == 4);
        long epoch = router.engines().get(e.id).epoch();

        send(e, first); // the same batch again
        send(e, second);
        // An older batch arriving last (its sequence and stamp before the last applied): were it applied, or taken
        // for a restart, blocks 3 and 4 would leave the view.
        send(e, KvEventBatch.newBuilder(e.batchWithSeq(first.getSeq(), e.removed(prompt, 2, 4))).setTsMs(first.getTsMs()).build());
        int[] marker = tokens(10, 32);
        long[] markerChain = HASHER.chain(FakeEngine.MODEL, null, marker, List.of());
        send(e, e.batch(e.stored(marker, 0, 2))); // applied after the three above: once it shows, they were read
        await(() -> router.pick(markerChain), x -> x.engineId().equals(e.id) && x.matchedBlocks() == 2);

        assertThat(router.pick(chain)).extracting(Pick::engineId, Pick::matchedBlocks).containsExactly(e.id, 4);
        assertThat(router.engines().get(e.id).epoch()).as("no restart: the same cache epoch").isEqualTo(epoch);
    }

    @Test
    void withoutHeartbeatsAnEnginesEntriesLeaveWithinTheTimeout() throws Exception {
        FakeEngine e = alive("e");
        long[] chain = storeFirstTwoBlocks(e, tokens(4, 32));
        await(() -> router.pick(chain), x -> x.engineId().equals(e.id) && x.matchedBlocks() == 2);

        ALIVE.remove(e);
        long silentSince = System.currentTimeMillis();
        // Suspect first (silent past 3 s): entries kept, affinity suspended.
        Pick suspect = await(() -> router.pick(chain), x -> "SPILL_UNAVAILABLE".equals(x.reason()));
        assertThat(suspect.engineId()).isNotEqualTo(e.id);
        Pick gone = await(() -> router.pick(chain), x -> "COLD".equals(x.reason()));
        long took = System.currentTimeMillis() - silentSince;
        assertThat(gone.matchedBlocks()).isZero();
        assertThat(router.engines()).doesNotContainKey(e.id);
        assertThat(took).as("dead-after is 6 s; allow for the heartbeat period and flushes")
                .isGreaterThanOrEqualTo(5_000).isLessThan(20_000);
    }

    @Test
    void aBusyEngineKeepsItsEntriesButPickSpillsAndSaysWhy() throws Exception {
        FakeEngine f = alive("f");
        long[] chain = storeFirstTwoBlocks(f, tokens(5, 32));
        await(() -> router.pick(chain), x -> x.engineId().equals(f.id));

        LOADS.put(f, new int[] {20, 8}); // 20 waiting > queue cap 8
        Pick spilled = await(() -> router.pick(chain), x -> "SPILL_UNAVAILABLE".equals(x.reason()));
        assertThat(spilled.engineId()).isNotEqualTo(f.id);
        assertThat(router.engines().get(f.id).status()).isEqualTo("BUSY");

        LOADS.put(f, new int[] {0, 1});
        Pick back = await(() -> router.pick(chain), x -> x.engineId().equals(f.id));
        assertThat(back).extracting(Pick::matchedBlocks, Pick::reason).containsExactly(2, "AFFINITY");
    }

    @Test
    void aSequenceGapLowersConfidence() throws Exception {
        FakeEngine g = alive("g");
        long[] chain = storeFirstTwoBlocks(g, tokens(6, 32));
        double before = await(() -> router.pick(chain), x -> x.engineId().equals(g.id)).confidence();
        assertThat(before).isGreaterThan(0.9);

        g.seq += 5; // five batches lost
        send(g, g.batch());
        Pick after = await(() -> router.pick(chain), x -> x.engineId().equals(g.id) && x.confidence() < 0.55);
        assertThat(router.engines().get(g.id).unsynced()).isTrue();
        assertThat(after.matchedBlocks()).isEqualTo(2);
    }

    @Test
    void malformedEventsGoToTheDeadLetterTopicWhileGoodOnesKeepFlowing() throws Exception {
        FakeEngine h = alive("h");
        int[] prompt = tokens(7, 32);
        long[] chain = HASHER.chain(FakeEngine.MODEL, null, prompt, List.of());
        rawProducer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.KV_EVENTS), h.id, "{\"not\":\"avro\"}".getBytes())).get();
        // 2 MiB of garbage: the kv-events topic takes it (4 MiB), the dead-letter topic would not (1 MiB).
        byte[] twoMiB = new byte[2 * 1024 * 1024];
        java.util.Arrays.fill(twoMiB, (byte) '{');
        rawProducer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.KV_EVENTS), h.id, twoMiB)).get();
        var badBlockSize = h.stored(prompt, 0, 2);
        badBlockSize.setBlockSize(12); // neither divides nor is a multiple of the 16-token chunk
        send(h, h.batch(badBlockSize));
        send(h, h.batch(h.stored(prompt, 0, 2)));

        await(() -> router.pick(chain), x -> x.engineId().equals(h.id) && x.matchedBlocks() == 2);
        List<DeadLetter> letters = deadLetters(3);
        assertThat(letters).extracting(DeadLetter::getStage).containsExactly("decode", "decode", "validate");
        assertThat(letters.get(0).getReason()).contains("expected the magic byte 0x00");
        assertThat(letters.get(0).getSourceTopic()).isEqualTo(config.kafka().topic(TopicNames.KV_EVENTS));
        assertThat(letters.get(0).getSourceOffset()).isGreaterThanOrEqualTo(0);
        assertThat(letters.get(0).getRawValue().remaining()).isEqualTo("{\"not\":\"avro\"}".length());
        // Filed truncated, with its size, and the job kept running (the good batch after it reached the view).
        assertThat(letters.get(1).getTruncated()).isTrue();
        assertThat(letters.get(1).getRawValueBytes()).isEqualTo(twoMiB.length);
        assertThat(letters.get(1).getRawValue().remaining()).isEqualTo(dev.kvrouter.schemas.DeadLetters.MAX_VALUE_BYTES);
        assertThat(letters.get(2).getReason()).contains("block_size 12 neither divides nor is a multiple");
    }

    @Test
    void aHotPrefixShortOfItsReplicaTargetIsRecommendedOnTheLeastLoadedReadyEngine() throws Exception {
        FakeEngine holder = alive("r1");
        FakeEngine idle = alive("r2");
        LOADS.put(holder, new int[] {0, 0});
        LOADS.put(idle, new int[] {0, 0}); // every other engine runs 1: r2 is the least loaded non-holder
        int[] prompt = tokens(8, 64);
        long[] chain = HASHER.chain(FakeEngine.MODEL, null, prompt, List.of());
        send(holder, holder.batch(holder.stored(prompt, 0, 4)));
        await(() -> router.pick(chain), x -> x.engineId().equals(holder.id) && x.matchedBlocks() == 4);

        List<ReplicationRecommendation> got = new ArrayList<>();
        try (KafkaConsumer<String, ReplicationRecommendation> consumer =
                     consumer("it-replicas", config.kafka().topic(TopicNames.REPLICATION_RECOMMENDATIONS))) {
            long deadline = System.nanoTime() + ViewTestSupport.WAIT.toNanos();
            int n = 0;
            // Requests with the prefix (and a per-request suffix), until it is hot and r2 is recommended.
            while (got.stream().noneMatch(r -> r.getEngineId().equals(idle.id)) && System.nanoTime() < deadline) {
                String id = UniqueNames.topic("req-" + n++);
                List<Long> blocks = new ArrayList<>(java.util.Arrays.stream(chain).limit(3).boxed().toList());
                blocks.add((long) n);
                producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.ROUTING_DECISIONS), id, RoutingDecision.newBuilder()
                        .setRequestId(id).setEngineId(holder.id).setPredictedCachedBlocks(3).setReason(RouteReason.AFFINITY)
                        .setTsMs(System.currentTimeMillis()).setPromptBlockHashes(blocks).build()));
                producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.REQUEST_OUTCOMES), id, RequestOutcome.newBuilder()
                        .setRequestId(id).setEngineId(holder.id).setPromptTokens(64).setCachedTokens(48).setQueueMs(1)
                        .setTtftMs(5).setStatus(OutcomeStatus.OK).setTsMs(System.currentTimeMillis()).build()));
                consumer.poll(Duration.ofMillis(300)).forEach(r -> {
                    if (r.value().getRootBlock() == chain[0]) {
                        got.add(r.value());
                        assertThat(r.key()).isEqualTo(ViewLayout.hex(chain[0]));
                    }
                });
            }
        }
        assertThat(got).as("a recommendation to warm the prefix on %s", idle.id).anyMatch(r -> r.getEngineId().equals(idle.id));
        assertThat(got).as("never on an engine that holds it").noneMatch(r -> r.getEngineId().equals(holder.id));
        ReplicationRecommendation r = got.stream().filter(x -> x.getEngineId().equals(idle.id)).findFirst().orElseThrow();
        assertThat(r.getHolders()).containsExactly(holder.id);
        assertThat(r.getSourceEngine()).isEqualTo(holder.id);
        assertThat(r.getLiveReplicas()).isEqualTo(1);
        assertThat(r.getTargetReplicas()).as("the holder is not above the fleet mean").isEqualTo(2);
        assertThat(r.getPrefixBlockHashes()).as("the blocks the requests share")
                .containsExactly(chain[0], chain[1], chain[2]);
        assertThat(r.getRequests()).isGreaterThanOrEqualTo(3);
    }

    // --- helpers ------------------------------------------------------------------------------

    private static FakeEngine alive(String name) throws Exception {
        FakeEngine e = new FakeEngine(UniqueNames.topic("engine-" + name), 16);
        producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.ENGINE_LOAD), e.id, e.load(0, 1))).get();
        ALIVE.add(e);
        return e;
    }

    private static void send(FakeEngine e, Object batch) throws Exception {
        producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.KV_EVENTS), e.id, batch)).get();
    }

    /** The engine stores the prompt's first two blocks; returns the prompt's chain. */
    private static long[] storeFirstTwoBlocks(FakeEngine e, int[] prompt) throws Exception {
        send(e, e.batch(e.stored(prompt, 0, 2)));
        return HASHER.chain(FakeEngine.MODEL, null, prompt, List.of());
    }

    private static int[] tokens(long seed, int n) {
        Random random = new Random(seed * 7919 + System.nanoTime());
        return random.ints(n, 0, 50_000).toArray();
    }

    private static Pick await(Supplier<Pick> pick, Predicate<Pick> until) throws InterruptedException {
        return ViewTestSupport.await(pick, until);
    }

    private static <V> KafkaConsumer<String, V> consumer(String group, String topic) {
        return ViewTestSupport.consumer(stack, group, topic);
    }

    private static List<DeadLetter> deadLetters(int expected) {
        List<DeadLetter> letters = new ArrayList<>();
        try (KafkaConsumer<String, DeadLetter> consumer = consumer("it-dlq", config.kafka().topic(TopicNames.DEAD_LETTER))) {
            long deadline = System.nanoTime() + ViewTestSupport.WAIT.toNanos();
            while (letters.size() < expected && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(r -> letters.add(r.value()));
            }
        }
        letters.sort(java.util.Comparator.comparingLong(DeadLetter::getSourceOffset));
        return letters;
    }
}
