package dev.kvrouter.bridge;

import static dev.kvrouter.bridge.VllmEventEncoder.Encoding.MAP;
import static dev.kvrouter.bridge.VllmEventEncoder.Encoding.TAGGED_ARRAY;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.kvrouter.common.TopicNames;
import dev.kvrouter.dlq.DeadLetter;
import dev.kvrouter.events.AllBlocksCleared;
import dev.kvrouter.events.BlockRemoved;
import dev.kvrouter.events.BlockStored;
import dev.kvrouter.events.EngineLifecycle;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.schemas.BlockHashes;
import dev.kvrouter.schemas.registry.RegistrySettings;
import dev.kvrouter.schemas.serde.RegistryAvroDeserializer;
import dev.kvrouter.stack.LocalKafka;
import dev.kvrouter.stack.Ports;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.LocalStackExtension;
import dev.kvrouter.stack.junit.UniqueNames;
import dev.kvrouter.topics.TopicApplier;
import dev.kvrouter.topics.TopicCatalog;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The bridge end to end: stand-in engines publish vLLM's exact frames on real ZMQ sockets on
 * 127.0.0.1 (every event kind, both encodings, both hash forms, trailing fields left out, a gap that
 * replay fills, a gap without replay, a restart, garbage), a ROUTER answers replay requests as vLLM
 * does, an HTTP server serves an older vLLM's metrics page; what reaches the real Kafka is read back
 * with the project's deserializer.
 */
@ExtendWith(LocalStackExtension.class)
class BridgeITCase {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final byte[] GARBAGE = {(byte) 0xc1, 0x00, (byte) 0xff, 0x13};
    private static final long HIGH_HASH = 0xFEDC_BA98_7654_3210L; // above 2^63 as unsigned

    /** An older vLLM's page: gpu_cache_usage_perc, no engine label. */
    private static final String OLD_METRICS = """
            # HELP vllm:num_requests_running Number of requests currently running on GPU.
            # TYPE vllm:num_requests_running gauge
            vllm:num_requests_running{model_name="it-model"} 3.0
            # HELP vllm:num_requests_waiting Number of requests waiting to be processed.
            # TYPE vllm:num_requests_waiting gauge
            vllm:num_requests_waiting{model_name="it-model"} 9.0
            # HELP vllm:gpu_cache_usage_perc GPU KV-cache usage. 1 means 100 percent usage.
            # TYPE vllm:gpu_cache_usage_perc gauge
            vllm:gpu_cache_usage_perc{model_name="it-model"} 0.25
            # HELP vllm:cache_config_info information of cache_config
            # TYPE vllm:cache_config_info gauge
            vllm:cache_config_info{block_size="4",cache_dtype="auto",num_gpu_blocks="1200"} 1.0
            """;

    @TempDir
    Path dir;
    private StackAddresses stack;
    private String prefix;
    private ZContext zmq;
    private HttpServer http;
    private VllmReplayServer replayServer;

    @BeforeEach
    void setUp(StackAddresses stack) throws Exception {
        this.stack = stack;
        prefix = UniqueNames.topic("it-bridge") + ".";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", stack.kafkaBootstrap()))) {
            TopicApplier applier = new TopicApplier(admin, Duration.ofSeconds(30));
            assertThat(applier.apply(applier.plan(TopicCatalog.bundled().withPrefix(prefix)))).isEmpty();
        }
        zmq = new ZContext();
        http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        http.createContext("/metrics", exchange -> {
            byte[] body = OLD_METRICS.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        http.start();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (replayServer != null) {
            replayServer.close();
        }
        http.stop(0);
        zmq.close();
    }

    @Test
    void enginesFramesReachKafkaWithGapsReplayedRestartsForwardedAndGarbageDeadLettered() throws Exception {
        // Engine A: one publisher with replay, and metrics. Engine B: two data-parallel ranks on port and port + 1, no replay.
        ZMQ.Socket pubA = zmq.createSocket(SocketType.XPUB);
        int portA = pubA.bindToRandomPort("tcp://127.0.0.1");
        replayServer = new VllmReplayServer(zmq, "127.0.0.1");
        Map<Long, byte[]> replayBuffer = replayServer.buffer();
        int replayPort = replayServer.port();
        List<ZMQ.Socket> pubB = bindConsecutive(2);
        int portB = Integer.parseInt(pubB.get(0).getLastEndpoint().replaceAll(".*:", ""));

        Path engines = dir.resolve("engines.yaml");
        String engineA = """
                engines:
                  - id: it-a
                    model: it-model
                    events: tcp://127.0.0.1:%d
                    replay: tcp://127.0.0.1:%d
                    metrics: http://127.0.0.1:%d/metrics
                    role: prefill
                """.formatted(portA, replayPort, http.getAddress().getPort());
        Files.writeString(engines, engineA);
        int metricsPort = Ports.free();
        BridgeConfig config = BridgeConfig.from(Map.of("kafka.bootstrap", stack.kafkaBootstrap(),
                "schema-registry.url", stack.schemaRegistryUrl(), "topics.prefix", prefix, "engines.file", engines.toString(),
                "engines.reload-interval", "100 ms", "metrics.scrape-interval", "200 ms", "report.interval", "1 s",
                "prometheus.listen", "127.0.0.1:" + metricsPort));

        try (Bridge bridge = start(config)) {
            assertThat(bridge.engines()).containsOnlyKeys("it-a");
            BridgeITCase.awaitSubscription(pubA);
            Object subscriptionA = bridge.subscription("it-a");

            // Reload: B joins, A keeps running untouched.
            Files.writeString(engines, engineA + """
                      - id: it-b
                        model: it-model
                        events: tcp://127.0.0.1:%d
                        data-parallel-size: 2
                    """.formatted(portB));
            awaitSubscription(pubB.get(0));
            awaitSubscription(pubB.get(1));
            assertThat(bridge.engines()).containsOnlyKeys("it-a", "it-b");
            assertThat(bridge.subscription("it-a")).isSameAs(subscriptionA);

            // Engine A, in vLLM's byte format.
            List<Long> u64 = List.of(HIGH_HASH, 42L);
            byte[] d1 = digest(1);
            byte[] d2 = digest(2);
            publish(pubA, replayBuffer, 0, VllmEventEncoder.batch(1_700_000_000.5, List.of(
                    VllmEventEncoder.blockStored(u64, 7L, new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 4, 0, "GPU", "lora-x",
                            Arrays.asList(List.of("img:1f"), null), 0, "full_attention", null),
                    VllmEventEncoder.blockRemoved(List.of(42L), "GPU", 0)), 0, TAGGED_ARRAY, false));
            publish(pubA, replayBuffer, 1, VllmEventEncoder.batch(1_700_000_001.0, List.of(
                    VllmEventEncoder.blockStored(List.of(d1, d2), null, new int[] {9, 9, 9, 9, 8, 8, 8, 8}, 4, null, null, null, null, null, null, null).first(4),
                    VllmEventEncoder.allBlocksCleared()), null, MAP, true));
            publish(pubA, replayBuffer, 2, VllmEventEncoder.batch(1_700_000_002.0, List.of(
                    VllmEventEncoder.blockStored(List.of(HIGH_HASH), null, new int[] {1, 1, 1, 1}, 4, null, "CPU", null, null, null, null, null).first(6),
                    VllmEventEncoder.blockRemoved(List.of(d1), null, null).first(1)), null, TAGGED_ARRAY, true));
            publish(pubA, replayBuffer, 3, GARBAGE);
            // 4 and 5 are lost on the way (only the engine's replay buffer has them); 6 reveals the gap.
            replayBuffer.put(4L, VllmEventEncoder.batch(1_700_000_004.0, List.of(
                    VllmEventEncoder.blockRemoved(List.of(HIGH_HASH), "CPU", 0)), 0, MAP, false));
            replayBuffer.put(5L, VllmEventEncoder.batch(1_700_000_005.0, List.of(
                    VllmEventEncoder.blockRemoved(List.of(d2), "GPU", 1)), 0, TAGGED_ARRAY, false));
            publish(pubA, replayBuffer, 6, VllmEventEncoder.batch(1_700_000_006.0, List.of(
                    VllmEventEncoder.allBlocksCleared()), 0, TAGGED_ARRAY, false));
            // The engine restarts: its sequence starts at 0 again, and the bridge misses the new 0 (replay has it).
            await(bridge::metrics, m -> m.batchesReplayed() == 2); // the old process's replay is done
            replayBuffer.clear();
            replayBuffer.put(0L, VllmEventEncoder.batch(1_700_000_100.0, List.of(
                    VllmEventEncoder.blockStored(List.of(1L), null, new int[] {5, 5, 5, 5}, 4, null, null, null, null, null, null, null).first(4)),
                    0, MAP, false));
            publish(pubA, replayBuffer, 1, VllmEventEncoder.batch(1_700_000_101.0, List.of(VllmEventEncoder.allBlocksCleared()), 0, MAP, false));

            // Engine B: rank 0 loses 1..2 (no replay) and restarts; rank 1 has its own sequence.
            byte[] cleared = VllmEventEncoder.batch(1_700_000_010.0, List.of(VllmEventEncoder.allBlocksCleared()), null, TAGGED_ARRAY, false);
            publish(pubB.get(0), null, 0, cleared);
            publish(pubB.get(1), null, 0, cleared);
            publish(pubB.get(0), null, 3, cleared);
            publish(pubB.get(1), null, 1, cleared);
            publish(pubB.get(0), null, 0, cleared);

            List<KvEventBatch> batches = consume(config.topic(TopicNames.KV_EVENTS), 13, KvEventBatch.class);
            Map<String, List<Long>> seqs = new TreeMap<>();
            for (KvEventBatch b : batches) {
                seqs.computeIfAbsent(b.getEngineId() + "/" + b.getDataParallelRank(), k -> new ArrayList<>()).add(b.getSeq());
            }
            assertThat(seqs).containsExactly(
                    Map.entry("it-a/null", List.of(0L, 1L, 2L, 4L, 5L, 6L, 0L, 1L)),
                    Map.entry("it-b/0", List.of(0L, 3L, 0L)),
                    Map.entry("it-b/1", List.of(0L, 1L)));

            List<KvEventBatch> a = batches.stream().filter(b -> b.getEngineId().equals("it-a")).toList();
            assertThat(a).allSatisfy(b -> assertThat(b.getModel()).isEqualTo("it-model"));
            KvEventBatch first = a.get(0);
            assertThat(first.getTsMs()).isEqualTo(1_700_000_000_500L);
            BlockStored stored = (BlockStored) first.getEvents().get(0);
            assertThat(stored.getBlockHashes()).containsExactly(BlockHashes.ofUnsigned64(HIGH_HASH), BlockHashes.ofUnsigned64(42));
            assertThat(stored.getParentBlockHash()).isEqualTo(BlockHashes.ofUnsigned64(7));
            assertThat(stored.getTokenIds()).containsExactly(1, 2, 3, 4, 5, 6, 7, 8);
            assertThat(stored.getBlockSize()).isEqualTo(4);
            assertThat(stored.getMedium()).isEqualTo("GPU");
            assertThat(stored.getLoraName()).isEqualTo("lora-x");
            assertThat(stored.getExtraKeys()).containsExactly("img:1f");
            assertThat(stored.getKvCacheSpecKind()).isEqualTo("full_attention");
            assertThat(((BlockRemoved) first.getEvents().get(1)).getBlockHashes()).containsExactly(BlockHashes.ofUnsigned64(42));

            BlockStored digests = (BlockStored) a.get(1).getEvents().get(0);
            assertThat(digests.getBlockHashes()).containsExactly(ByteBuffer.wrap(d1), ByteBuffer.wrap(d2));
            assertThat(digests.getParentBlockHash()).isNull();
            assertThat(digests.getMedium()).isNull();
            assertThat(a.get(1).getEvents().get(1)).isInstanceOf(AllBlocksCleared.class);
            assertThat(((BlockStored) a.get(2).getEvents().get(0)).getMedium()).isEqualTo("CPU");
            assertThat(((BlockRemoved) a.get(2).getEvents().get(1)).getBlockHashes()).containsExactly(ByteBuffer.wrap(d1));
            // Replayed batches 4 and 5, in order, then 6.
            assertThat(((BlockRemoved) a.get(3).getEvents().get(0)).getBlockHashes()).containsExactly(BlockHashes.ofUnsigned64(HIGH_HASH));
            assertThat(((BlockRemoved) a.get(4).getEvents().get(0)).getGroupIdx()).isEqualTo(1);
            assertThat(a.get(5).getEvents()).singleElement().isInstanceOf(AllBlocksCleared.class);
            assertThat(a.get(6).getTsMs()).isEqualTo(1_700_000_100_000L); // the restarted engine's 0, from its replay buffer
            assertThat(a.get(7).getEvents()).singleElement().isInstanceOf(AllBlocksCleared.class);
            // Without data parallelism the batch carries no rank, even though vLLM sends 0: one engine key for the job.
            assertThat(a).allSatisfy(b -> assertThat(b.getDataParallelRank()).isNull());

            DeadLetter letter = consume(config.topic(TopicNames.DEAD_LETTER), 1, DeadLetter.class).get(0);
            assertThat(letter.getSourceTopic()).isEqualTo("tcp://127.0.0.1:" + portA);
            assertThat(letter.getStage()).isEqualTo("bridge");
            assertThat(letter.getRawValue()).isEqualTo(ByteBuffer.wrap(GARBAGE));
            assertThat(letter.getReason()).contains("publisher it-a", "batch 3", "not msgpack");

            EngineLoad load = consume(config.topic(TopicNames.ENGINE_LOAD), 1, EngineLoad.class).get(0);
            assertThat(load.getEngineId()).isEqualTo("it-a");
            assertThat(load.getModel()).isEqualTo("it-model");
            assertThat(load.getDataParallelRank()).isNull();
            assertThat(load.getWaiting()).isEqualTo(9);
            assertThat(load.getRunning()).isEqualTo(3);
            assertThat(load.getKvBlocksUsed()).isEqualTo(300);
            assertThat(load.getKvBlocksCapacity()).isEqualTo(1200);
            assertThat(load.getLifecycle()).isEqualTo(EngineLifecycle.READY);
            assertThat(load.getHeartbeatIntervalMs()).isEqualTo(200);
            assertThat(load.getRole()).isEqualTo(dev.kvrouter.events.EngineRole.PREFILL);

            BridgeMetrics.Snapshot m = await(bridge::metrics, s -> s.batchesForwarded() == 13);
            assertThat(m.gaps()).isEqualTo(3);
            assertThat(m.replayRequests()).isEqualTo(2);
            assertThat(m.batchesReplayed()).isEqualTo(3);
            assertThat(m.batchesMissing()).isEqualTo(2);
            assertThat(m.restarts()).isEqualTo(2);
            assertThat(m.decodeErrors()).isEqualTo(1);
            assertThat(m.droppedQueueFull()).isZero();
            assertThat(m.sendErrors()).isZero();
            assertThat(m.eventsForwarded()).isEqualTo(2 + 2 + 2 + 1 + 1 + 1 + 1 + 1 + 5);
            assertThat(m.subscriptions()).isEqualTo(3);

            // The same, per engine, as Prometheus scrapes it: A lost 4-5 (replayed) and its restart's 0
            // (replayed), and sent the garbage; B's rank 0 lost 1-2 for good and restarted.
            String scraped = scrape(metricsPort);
            assertThat(scraped).contains(
                    "kvr_bridge_batches_forwarded_total{engine=\"it-a\"} 8.0", "kvr_bridge_batches_forwarded_total{engine=\"it-b\"} 5.0",
                    "kvr_bridge_gaps_total{engine=\"it-a\"} 2.0", "kvr_bridge_gaps_total{engine=\"it-b\"} 1.0",
                    "kvr_bridge_batches_missing_total{engine=\"it-a\"} 0.0", "kvr_bridge_batches_missing_total{engine=\"it-b\"} 2.0",
                    "kvr_bridge_replay_requests_total{engine=\"it-a\"} 2.0", "kvr_bridge_batches_replayed_total{engine=\"it-a\"} 3.0",
                    "kvr_bridge_restarts_total{engine=\"it-a\"} 1.0", "kvr_bridge_restarts_total{engine=\"it-b\"} 1.0",
                    "kvr_bridge_decode_errors_total{engine=\"it-a\"} 1.0", "kvr_bridge_decode_errors_total{engine=\"it-b\"} 0.0",
                    "kvr_bridge_events_forwarded_total{engine=\"it-b\"} 5.0",
                    "kvr_bridge_ack_latency_seconds_count{engine=\"it-a\"} 8", "kvr_bridge_event_age_seconds_count{engine=\"it-b\"} 5",
                    "# TYPE kvr_bridge_ack_latency_seconds histogram", "kvr_bridge_publishers 3.0");

            // Removing B stops only B, and its series leave the scrape.
            Files.writeString(engines, engineA);
            await(() -> bridge.engines().keySet(), ids -> ids.equals(java.util.Set.of("it-a")));
            assertThat(bridge.subscription("it-a")).isSameAs(subscriptionA);
            assertThat(scrape(metricsPort)).contains("engine=\"it-a\"").doesNotContain("engine=\"it-b\"");

            // A file that turns invalid is reported and changes nothing.
            Files.writeString(engines, "engines:\n  - {id: it-c}\n");
            Thread.sleep(500); // five reload intervals
            assertThat(bridge.engines()).containsOnlyKeys("it-a");
            assertThat(bridge.subscription("it-a")).isSameAs(subscriptionA);
        }
    }

    @Test
    void whenKafkaIsSlowerThanTheEnginesTheBoundedQueueDropsAndCountsWhatItCouldNotTake() throws Exception {
        ZMQ.Socket pub = zmq.createSocket(SocketType.XPUB);
        int port = pub.bindToRandomPort("tcp://127.0.0.1");
        Path engines = dir.resolve("engines.yaml");
        Files.writeString(engines, """
                engines:
                  - {id: it-slow, model: it-model, events: "tcp://127.0.0.1:%d"}
                """.formatted(port));
        // Kafka that never answers (nothing listens on the port): the sender thread stays blocked in send().
        int closedPort;
        try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closedPort = probe.getLocalPort();
        }
        BridgeConfig config = BridgeConfig.from(Map.of("kafka.bootstrap", "127.0.0.1:" + closedPort,
                "schema-registry.url", stack.schemaRegistryUrl(), "topics.prefix", prefix, "engines.file", engines.toString(),
                "queue.capacity", "2", "producer.max.block.ms", "2000"));
        try (Bridge bridge = start(config)) {
            awaitSubscription(pub);
            byte[] payload = VllmEventEncoder.batch(1.0, List.of(VllmEventEncoder.allBlocksCleared()), null, TAGGED_ARRAY, false);
            for (long seq = 0; seq < 50; seq++) {
                publish(pub, null, seq, payload);
            }
            // One record in the sender's hands, two in the queue: the other 47 are dropped, and counted (48 when
            // the third arrived before the sender thread took the first).
            BridgeMetrics.Snapshot m = await(bridge::metrics, s -> s.batchesReceived() == 50 && s.droppedQueueFull() >= 47);
            assertThat(m.droppedQueueFull()).isBetween(47L, 48L);
            assertThat(m.gaps()).as("the bridge received every batch: no gap on its side; the job sees the jumps").isZero();
            assertThat(m.batchesForwarded()).isZero();
        }
    }

    @Test
    void aPublisherThatStaysSilentGetsFreshSocketsAndStillDelivers() throws Exception {
        // The engine is not there yet: the bridge's socket hears nothing and is recreated every 300 ms.
        int port;
        try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        Path engines = dir.resolve("engines.yaml");
        Files.writeString(engines, """
                engines:
                  - {id: it-late, model: it-model, events: "tcp://127.0.0.1:%d"}
                """.formatted(port));
        BridgeConfig config = BridgeConfig.from(Map.of("kafka.bootstrap", stack.kafkaBootstrap(),
                "schema-registry.url", stack.schemaRegistryUrl(), "topics.prefix", prefix, "engines.file", engines.toString(),
                "zmq.resubscribe-after", "300 ms"));
        try (Bridge bridge = start(config)) {
            await(bridge::metrics, m -> m.resubscribes() >= 2);
            // The engine comes up; whichever socket is current connects, and its batches arrive.
            ZMQ.Socket pub = zmq.createSocket(SocketType.XPUB);
            pub.bind("tcp://127.0.0.1:" + port);
            awaitSubscription(pub);
            byte[] payload = VllmEventEncoder.batch(1.0, List.of(VllmEventEncoder.allBlocksCleared()), null, TAGGED_ARRAY, false);
            long seq = 0;
            long deadline = System.nanoTime() + WAIT.toNanos();
            // Until one arrives (a socket recreated just then would miss one, as a real engine's would): bounded.
            while (bridge.metrics().batchesForwarded() == 0) {
                assertThat(System.nanoTime()).as("a batch from the late engine within %s", WAIT).isLessThan(deadline);
                publish(pub, null, seq++, payload);
                Thread.sleep(50);
            }
            long resubscribes = bridge.metrics().resubscribes();
            Thread.sleep(1_000);
            assertThat(bridge.metrics().resubscribes()).as("a publisher that was heard keeps its sockets").isEqualTo(resubscribes);
        }
    }

    @Test
    void aBatchOverTheTopicsLimitIsDeadLetteredTruncatedAndAMegabytesBatchUnderItIsSent(@TempDir Path dir) throws Exception {
        Path engines = dir.resolve("engines.yaml");
        Files.writeString(engines, "engines: []\n");
        BridgeConfig config = BridgeConfig.from(Map.of("kafka.bootstrap", stack.kafkaBootstrap(),
                "schema-registry.url", stack.schemaRegistryUrl(), "topics.prefix", prefix, "engines.file", engines.toString()));
        BridgeMetrics metrics = new BridgeMetrics();
        KvEventBatch big = batchOfTokens("it-big", 0, 600_000);      // ~2 MiB: over the producer's default 1 MiB
        KvEventBatch huge = batchOfTokens("it-huge", 0, 1_500_000);  // ~5 MiB: over the topic's 4 MiB
        try (KafkaOutbox outbox = new KafkaOutbox(config, metrics)) {
            assertThat(outbox.offer(big, System.nanoTime())).isTrue();
            assertThat(outbox.offer(huge, System.nanoTime())).isTrue();
            outbox.flush(); // also the dead letter the huge batch becomes: offered before the batch is settled
        }
        List<KvEventBatch> sent = consume(config.topic(TopicNames.KV_EVENTS), 1, KvEventBatch.class);
        assertThat(sent).extracting(KvEventBatch::getEngineId).containsExactly("it-big");
        DeadLetter letter = consume(config.topic(TopicNames.DEAD_LETTER), 1, DeadLetter.class).get(0);
        assertThat(letter.getStage()).isEqualTo(KafkaOutbox.OVERSIZE_STAGE);
        assertThat(letter.getTruncated()).isTrue();
        assertThat(letter.getRawValueBytes()).isGreaterThan(KafkaOutbox.KV_EVENTS_MAX_BYTES);
        assertThat(letter.getRawValue().remaining()).isEqualTo(dev.kvrouter.schemas.DeadLetters.MAX_VALUE_BYTES);
        assertThat(letter.getReason()).contains("it-huge").contains("bytes serialized");
        assertThat(metrics.snapshot().sendErrors()).as("nothing lost").isZero();
    }

    /**
     * Fault b of the recovery table: the broker is killed (SIGKILL) mid-stream and started again on
     * its log dir while the engine keeps publishing; every batch reaches Kafka, none is dropped.
     */
    @Test
    void aKafkaBrokerKilledAndRestartedMidStreamLosesNoBatch(@TempDir Path kafkaDir) throws Exception {
        try (LocalKafka kafka = LocalKafka.start(kafkaDir)) {
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrap()))) {
                TopicApplier applier = new TopicApplier(admin, Duration.ofSeconds(30));
                assertThat(applier.apply(applier.plan(TopicCatalog.bundled().withPrefix(prefix)))).isEmpty();
            }
            ZMQ.Socket pub = zmq.createSocket(SocketType.XPUB);
            int port = pub.bindToRandomPort("tcp://127.0.0.1");
            Path engines = dir.resolve("engines.yaml");
            Files.writeString(engines, """
                    engines:
                      - {id: it-broker-restart, model: it-model, events: "tcp://127.0.0.1:%d"}
                    """.formatted(port));
            BridgeConfig config = BridgeConfig.from(Map.of("kafka.bootstrap", kafka.bootstrap(),
                    "schema-registry.url", stack.schemaRegistryUrl(), "topics.prefix", prefix, "engines.file", engines.toString()));
            int batches = 300;
            try (Bridge bridge = start(config)) {
                awaitSubscription(pub);
                byte[] payload = VllmEventEncoder.batch(1.0, List.of(VllmEventEncoder.allBlocksCleared()), null, TAGGED_ARRAY, false);
                for (long seq = 0; seq < batches; seq++) {
                    if (seq == 100) {
                        kafka.kill(); // batches 100-199 are published while no broker runs
                    } else if (seq == 200) {
                        kafka.restart(); // returns once it answers; the engine has paused as long
                    }
                    publish(pub, null, seq, payload);
                    Thread.sleep(20);
                }
                List<KvEventBatch> sent = consume(kafka.bootstrap(), config.topic(TopicNames.KV_EVENTS), batches, KvEventBatch.class);
                assertThat(sent).extracting(KvEventBatch::getSeq).as("every batch, once, in order")
                        .containsExactlyElementsOf(java.util.stream.LongStream.range(0, batches).boxed().toList());
                BridgeMetrics.Snapshot m = bridge.metrics();
                assertThat(m.droppedQueueFull()).isZero();
                assertThat(m.sendErrors()).isZero();
            }
        }
    }

    private static KvEventBatch batchOfTokens(String engine, long seq, int tokens) {
        List<Integer> ids = new ArrayList<>(tokens);
        for (int t = 0; t < tokens; t++) {
            ids.add(100_000 + t % 50_000);
        }
        List<ByteBuffer> hashes = new ArrayList<>();
        for (int b = 0; b < tokens / 16; b++) {
            hashes.add(BlockHashes.ofUnsigned64(1_000 + b));
        }
        return KvEventBatch.newBuilder().setEngineId(engine).setModel("it-model").setSeq(seq).setTsMs(System.currentTimeMillis())
                .setEvents(List.of(BlockStored.newBuilder().setBlockHashes(hashes).setParentBlockHash(null).setTokenIds(ids)
                        .setBlockSize(16).build())).build();
    }

    /** The bridge on the test's ZMQ context (see {@link Bridge#start(BridgeConfig, java.util.function.Consumer, ZContext)}). */
    private Bridge start(BridgeConfig config) {
        return Bridge.start(config, System.out::println, zmq);
    }

    private static byte[] digest(int seed) {
        byte[] d = new byte[32];
        Arrays.fill(d, (byte) (0xA0 + seed));
        return d;
    }

    /** Sends one message as vLLM does, keeping it in the replay buffer when given. */
    private static void publish(ZMQ.Socket pub, Map<Long, byte[]> replayBuffer, long seq, byte[] payload) {
        List<byte[]> frames = VllmEventEncoder.frames("", seq, payload);
        pub.sendMore(frames.get(0));
        pub.sendMore(frames.get(1));
        pub.send(frames.get(2));
        if (replayBuffer != null) {
            replayBuffer.put(seq, payload);
        }
    }

    /** Waits (bounded) for the subscriber to reach the XPUB socket: from then on nothing published is lost to the slow joiner. */
    /** The bridge's {@code /metrics} page now. */
    private static String scrape(int port) throws Exception {
        java.net.http.HttpResponse<String> response = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + port + "/metrics")).timeout(WAIT).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        return response.body();
    }

    static void awaitSubscription(ZMQ.Socket xpub) {
        BridgeBench.awaitSubscription(xpub, WAIT);
    }

    /** XPUB sockets on consecutive loopback ports, as vLLM binds one per data-parallel rank. */
    private List<ZMQ.Socket> bindConsecutive(int count) {
        for (int attempt = 0; attempt < 20; attempt++) {
            List<ZMQ.Socket> sockets = new ArrayList<>();
            ZMQ.Socket first = zmq.createSocket(SocketType.XPUB);
            int port = first.bindToRandomPort("tcp://127.0.0.1", 20_000, 60_000);
            sockets.add(first);
            try {
                for (int i = 1; i < count; i++) {
                    ZMQ.Socket next = zmq.createSocket(SocketType.XPUB);
                    sockets.add(next);
                    next.bind("tcp://127.0.0.1:" + (port + i));
                }
                return sockets;
            } catch (org.zeromq.ZMQException taken) {
                sockets.forEach(ZMQ.Socket::close);
            }
        }
        throw new IllegalStateException("no " + count + " consecutive free loopback ports in 20 attempts");
    }

    /** Reads {@code count} records of the topic from the start, with the project's deserializer; bounded by WAIT. */
    private <T> List<T> consume(String topic, int count, Class<T> type) {
        return consume(stack.kafkaBootstrap(), topic, count, type);
    }

    private <T> List<T> consume(String bootstrap, String topic, int count, Class<T> type) {
        try (KafkaConsumer<String, Object> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.GROUP_ID_CONFIG, UniqueNames.topic("it-bridge-reader"),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, RegistryAvroDeserializer.class,
                RegistrySettings.URL, stack.schemaRegistryUrl()))) {
            consumer.subscribe(List.of(topic));
            List<ConsumerRecord<String, Object>> records = new ArrayList<>();
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (records.size() < count) {
                assertThat(System.nanoTime()).as("waiting %s for %d records on %s; got %d", WAIT, count, topic, records.size())
                        .isLessThan(deadline);
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
            // Per key (engine) in order: the partitions keep each engine's batches in order.
            records.sort(java.util.Comparator.comparing((ConsumerRecord<String, Object> r) -> r.partition()).thenComparing(ConsumerRecord::offset));
            return records.stream().map(r -> type.cast(r.value())).toList();
        }
    }

    private static <T> T await(Supplier<T> value, Predicate<T> until) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        T last = value.get();
        while (!until.test(last)) {
            assertThat(System.nanoTime()).as("waiting %s; last: %s", WAIT, last).isLessThan(deadline);
            Thread.sleep(50);
            last = value.get();
        }
        return last;
    }
}
