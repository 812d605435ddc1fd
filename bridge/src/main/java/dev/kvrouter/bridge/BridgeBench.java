package dev.kvrouter.bridge;

import dev.kvrouter.common.TopicNames;
import dev.kvrouter.common.config.ClientConfig;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.topics.KafkaClients;
import dev.kvrouter.topics.TopicApplier;
import dev.kvrouter.topics.TopicCatalog;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * {@code kvr bridge bench}: batches/s and events/s through the bridge, from local ZMQ publishers in
 * vLLM's wire format to acknowledged records in the stack's Kafka, beside the ceiling measured in the
 * same run: the same Avro batches produced straight to Kafka by one idempotent producer.
 */
public final class BridgeBench {

    private static final int BLOCK_SIZE = 16;
    /** Distinct payloads cycled through (the content does not matter to the rate; memory does). */
    private static final int DISTINCT_PAYLOADS = 512;
    private static final int IN_FLIGHT = 10_000;

    private BridgeBench() {}

    @CommandLine.Command(name = "bench", mixinStandardHelpOptions = true,
            description = "Benchmark: batches/s and events/s from local ZMQ publishers through the bridge into the running "
                    + "stack's Kafka, beside raw producer writes of the same batches. Figures are printed, never asserted.")
    static final class Command implements Callable<Integer> {
        @Option(names = "--batches", defaultValue = "100000", description = "Batches to publish (default: ${DEFAULT-VALUE}).")
        int batches;

        @Option(names = "--engines", defaultValue = "4", description = "Publishers (engines) (default: ${DEFAULT-VALUE}).")
        int engines;

        @Option(names = "--blocks", defaultValue = "16", description = "Blocks per BlockStored; each batch also removes as many (default: ${DEFAULT-VALUE}).")
        int blocks;

        @Override
        public Integer call() throws Exception {
            StackAddresses stack = StackAddresses.toMeasure();
            run(stack.kafkaBootstrap(), stack.schemaRegistryUrl(), stack.clientConfig(), batches, engines, blocks, System.out);
            return 0;
        }
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new Command()).execute(args));
    }

    /** @param clientConfig the client config file of a secure stack, "" for none */
    public static void run(String bootstrap, String registry, String clientConfig, int batches, int engines, int blocks, PrintStream out)
            throws Exception {
        String prefix = "bench-bridge-" + UUID.randomUUID().toString().substring(0, 8) + ".";
        ClientConfig client = clientConfig.isEmpty() ? ClientConfig.none() : ClientConfig.load(Path.of(clientConfig));
        try (Admin admin = Admin.create(KafkaClients.config(client, Map.of("bootstrap.servers", bootstrap)))) {
            TopicApplier applier = new TopicApplier(admin, Duration.ofSeconds(30));
            List<String> failures = applier.apply(applier.plan(TopicCatalog.bundled().withPrefix(prefix)));
            if (!failures.isEmpty()) {
                throw new IllegalStateException("could not create the bench topics: " + failures);
            }
        }
        List<byte[]> payloads = new ArrayList<>(DISTINCT_PAYLOADS);
        for (int i = 0; i < DISTINCT_PAYLOADS; i++) {
            List<Long> hashes = VllmEventEncoder.hashes(i * 1_000_003L, blocks);
            int[] tokens = new java.util.Random(i).ints(blocks * BLOCK_SIZE, 0, 100_000).toArray();
            payloads.add(VllmEventEncoder.batch(System.currentTimeMillis() / 1000.0, List.of(
                    VllmEventEncoder.blockStored(hashes, hashes.get(0) ^ 1, tokens, BLOCK_SIZE, null, "GPU", null, null, 0, null, null),
                    VllmEventEncoder.blockRemoved(hashes, "GPU", 0)), 0, VllmEventEncoder.Encoding.MAP, false));
        }
        int eventsPerBatch = 2;
        out.printf("bridge bench: %d batches (%d events, %d blocks of %d tokens stored and removed per batch, %d bytes) from %d engine(s)%n",
                batches, eventsPerBatch, blocks, BLOCK_SIZE, payloads.get(0).length, engines);

        Path dir = Files.createTempDirectory("kvr-bridge-bench");
        Path file = dir.resolve("engines.yaml");
        Files.writeString(file, "engines: []\n");
        BridgeConfig config = BridgeConfig.from(Map.of("kafka.bootstrap", bootstrap, "schema-registry.url", registry,
                "client-config", clientConfig,
                "topics.prefix", prefix, "engines.file", file.toString(), "engines.reload-interval", "100 ms",
                "zmq.receive-hwm", String.valueOf(2 * IN_FLIGHT), "queue.capacity", String.valueOf(2 * IN_FLIGHT),
                // The publishers live in this JVM on their own context, like engines in their own processes; a
                // connection jeromq leaves stalled (see Bridge.start) is remade quickly.
                "zmq.resubscribe-after", "1 s", "report.interval", "1 h"));

        // 1. The ceiling: the same batches, already Avro, produced by one idempotent producer (acks=all) from one thread.
        KvEventDecoder.DecodedBatch decoded = new KvEventDecoder().decode(payloads.get(0));
        KvEventBatch template = KvEventBatch.newBuilder().setEngineId("bench-raw").setModel("bench-model").setSeq(0).setTsMs(decoded.tsMs())
                .setEvents(decoded.events()).build();
        double rawRate;
        try (KafkaProducer<String, Object> producer = new KafkaProducer<>(KafkaOutbox.producerConfig(config))) {
            producer.send(new ProducerRecord<>(config.topic(TopicNames.KV_EVENTS), "warm-up", template)).get();
            long t0 = System.nanoTime();
            for (int i = 0; i < batches; i++) {
                // The same events object each time (a copying builder would add work the bridge does not do).
                KvEventBatch b = KvEventBatch.newBuilder().setEngineId("bench-raw-" + (i % engines)).setModel(template.getModel())
                        .setSeq(i / engines).setTsMs(template.getTsMs()).setEvents(template.getEvents()).build();
                producer.send(new ProducerRecord<>(config.topic(TopicNames.KV_EVENTS), b.getEngineId(), b));
            }
            producer.flush();
            rawRate = batches / ((System.nanoTime() - t0) / 1e9);
        }

        // 2. The bridge: ZMQ publishers in vLLM's format -> decode -> Avro -> Kafka, acknowledged.
        try (ZContext zmq = new ZContext()) {
            List<ZMQ.Socket> publishers = new ArrayList<>();
            StringBuilder yaml = new StringBuilder("engines:\n");
            for (int e = 0; e < engines; e++) {
                ZMQ.Socket pub = zmq.createSocket(SocketType.XPUB);
                pub.setSndHWM(2 * IN_FLIGHT);
                int port = pub.bindToRandomPort("tcp://127.0.0.1");
                publishers.add(pub);
                yaml.append("  - id: bench-engine-").append(e).append("\n    model: bench-model\n    events: tcp://127.0.0.1:")
                        .append(port).append('\n');
            }
            try (Bridge bridge = Bridge.start(config)) {
                Files.writeString(file, yaml.toString());
                for (ZMQ.Socket pub : publishers) {
                    awaitSubscription(pub, Duration.ofSeconds(20));
                }
                long t0 = System.nanoTime();
                long windowDeadline = t0 + Duration.ofMinutes(10).toNanos();
                for (int i = 0; i < batches; i++) {
                    // Closed loop: at most IN_FLIGHT batches published and not yet acknowledged, so the figure is
                    // the rate the bridge sustains without dropping, not how fast a queue fills.
                    if (i % 256 == 0) {
                        while (i - bridge.metrics().batchesForwarded() > IN_FLIGHT && System.nanoTime() < windowDeadline) {
                            Thread.sleep(1);
                        }
                    }
                    ZMQ.Socket pub = publishers.get(i % engines);
                    List<byte[]> frames = VllmEventEncoder.frames("", i / engines, payloads.get(i % DISTINCT_PAYLOADS));
                    pub.sendMore(frames.get(0));
                    pub.sendMore(frames.get(1));
                    pub.send(frames.get(2));
                }
                double publishSeconds = (System.nanoTime() - t0) / 1e9;
                // Until every batch is acknowledged, or nothing moved for 10 s (drops would be reported below).
                long lastForwarded = -1;
                long lastProgress = System.nanoTime();
                long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
                BridgeMetrics.Snapshot m = bridge.metrics();
                while (m.batchesForwarded() < batches && System.nanoTime() < deadline
                        && System.nanoTime() - lastProgress < Duration.ofSeconds(10).toNanos()) {
                    Thread.sleep(5);
                    m = bridge.metrics();
                    if (m.batchesForwarded() != lastForwarded) {
                        lastForwarded = m.batchesForwarded();
                        lastProgress = System.nanoTime();
                    }
                }
                double seconds = (lastProgress - t0) / 1e9;
                double batchRate = m.batchesForwarded() / seconds;
                out.printf("%-52s %12.0f batches/s%n", "raw idempotent producer, one thread (ceiling)", rawRate);
                out.printf("%-52s %12.0f batches/s  %10.0f events/s  (%.0f %% of the ceiling)%n",
                        "ZMQ -> bridge -> Kafka (acknowledged)", batchRate, batchRate * eventsPerBatch, 100 * batchRate / rawRate);
                out.printf("%-52s %12.1f s%n", "publishing took (closed loop, 10000 in flight)", publishSeconds);
                out.printf("forwarded %d of %d; gaps %d, missing %d, dropped (queue full) %d, decode errors %d, send errors %d; "
                                + "max ack latency %d ms%n", m.batchesForwarded(), batches, m.gaps(), m.batchesMissing(),
                        m.droppedQueueFull(), m.decodeErrors(), m.sendErrors(), m.maxAckLatencyMs());
            }
        }
    }

    /** XPUB hears each subscription: once it has, published messages reach the subscriber (no slow-joiner loss). */
    public static void awaitSubscription(ZMQ.Socket xpub, Duration limit) {
        xpub.setReceiveTimeOut((int) limit.toMillis());
        byte[] subscription = xpub.recv(0);
        if (subscription == null || subscription.length == 0 || subscription[0] != 1) {
            throw new IllegalStateException("no subscriber on " + xpub.getLastEndpoint() + " within " + limit);
        }
    }
}
