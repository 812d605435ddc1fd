package dev.kvrouter.bridge;

import dev.kvrouter.bridge.OutboxBudget.Kind;
import dev.kvrouter.common.TopicNames;
import dev.kvrouter.dlq.DeadLetter;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.schemas.DeadLetters;
import dev.kvrouter.schemas.registry.RegistrySettings;
import dev.kvrouter.schemas.serde.RegistryAvroSerializer;
import dev.kvrouter.topics.KafkaClients;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything the bridge sends to Kafka goes through one queue and one sender thread, so a slow Kafka
 * never blocks the ZMQ receive threads. The queue is bounded by records and by serialized bytes, per
 * engine too, with room apart for the heartbeats ({@link OutboxBudget}): a record that does not fit
 * is dropped and counted (a dropped batch leaves a sequence gap the job sees). Records are
 * serialized (Avro, Confluent wire format) by the thread that offers them, so the engines' threads share that work;
 * the sender only hands bytes to the producer. The producer delivers in order (idempotent, acks=all,
 * by default one request in flight: {@link KafkaClients#orderedDelivery()}), and one thread sends in arrival
 * order, so each engine's batches reach its partition once and in order.
 *
 * <p>A batch too large for its topic (the producer's {@code max.request.size}, or the broker's
 * {@code max.message.bytes}) is not lost: it goes to the dead-letter topic, truncated, with its
 * size and the reason, and the job sees the gap it leaves.
 */
final class KafkaOutbox implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaOutbox.class);
    /** The largest record {@code kvr.kv-events} takes (its max.message.bytes in kvr-topics.yaml): the producer's limit too. */
    static final int KV_EVENTS_MAX_BYTES = 4 * 1024 * 1024;
    static final String OVERSIZE_STAGE = "bridge-send";

    /** Load reports that may wait at once: room of their own, apart from the batches'. */
    static final int LOAD_CAPACITY = 1024;

    private record Pending(Kind kind, String topic, String key, byte[] value, long receivedNanos, long eventTsMs, int events) {}

    private final BridgeConfig config;
    private final BridgeMetrics metrics;
    /** Unbounded as a structure: {@link #budget} admits what may wait. */
    private final BlockingQueue<Pending> queue = new LinkedBlockingQueue<>();
    private final OutboxBudget budget;
    private final KafkaProducer<String, byte[]> producer;
    private final RegistryAvroSerializer<SpecificRecord> serializer = new RegistryAvroSerializer<>();
    private final Thread sender;
    private volatile boolean running = true;
    private volatile long lastErrorLogNanos;
    /** Records offered and not yet acknowledged or failed. */
    private final AtomicLong unsettled = new AtomicLong();

    KafkaOutbox(BridgeConfig config, BridgeMetrics metrics) {
        this.config = config;
        this.metrics = metrics;
        this.budget = new OutboxBudget(config.queueCapacity(), config.queueMaxBytes(), config.queueEngineMaxBytes(), LOAD_CAPACITY);
        Map<String, Object> producerConfig = producerConfig(config);
        serializer.configure(producerConfig, false);
        producerConfig.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        this.producer = new KafkaProducer<>(producerConfig);
        this.sender = new Thread(this::sendLoop, "kvr-bridge-sender");
        sender.setDaemon(true);
        sender.start();
    }

    /** The producer settings, with the Avro value serializer (as a plain producer of the same records would have). */
    static Map<String, Object> producerConfig(BridgeConfig config) {
        // The client config's security settings first; the bridge's own and the overrides after them.
        Map<String, Object> p = KafkaClients.serdeConfig(config.client(), Map.of());
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        // A broker that is away stalls only the sender thread, and only this long per record; the
        // queue in front of it fills and drops meanwhile, which is counted and seen as gaps.
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
        // Batches of stored blocks with their token ids can be megabytes; the producer's default
        // (1 MiB) would refuse what the topic takes.
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, KV_EVENTS_MAX_BYTES);
        // One request in flight unless raised (producer.max.in.flight.requests.per.connection: safe on
        // brokers with KAFKA-15591's fix, 4.5 on); idempotence and acks=all are the bridge's contract.
        p.putAll(KafkaClients.orderedDelivery());
        p.putAll(config.producerOverrides());
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, config.kafkaBootstrap());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, RegistryAvroSerializer.class);
        p.put(RegistrySettings.URL, config.schemaRegistryUrl());
        return p;
    }

    /** Queues a batch keyed by engine id; false (and counted as dropped) when the queue is full. */
    boolean offer(KvEventBatch batch, long receivedNanos) {
        return offer(Kind.BATCH, config.topic(TopicNames.KV_EVENTS), batch.getEngineId(), batch, receivedNanos, batch.getTsMs(),
                batch.getEvents().size());
    }

    boolean offer(EngineLoad load) {
        return offer(Kind.LOAD, config.topic(TopicNames.ENGINE_LOAD), load.getEngineId(), load, System.nanoTime(), -1, 0);
    }

    /** Dead letters are keyed by their source, as the job files its own. */
    boolean offer(DeadLetter letter) {
        return offer(Kind.DEAD_LETTER, config.topic(TopicNames.DEAD_LETTER), letter.getSourceTopic(), letter, System.nanoTime(), -1, 0);
    }

    private boolean offer(Kind kind, String topic, String key, SpecificRecord record, long receivedNanos,
                          long eventTsMs, int events) {
        // Full already: do not spend the serialization on a record that will be dropped.
        if (!running || budget.full(kind, key)) {
            metrics.droppedQueueFull(key, kind == Kind.BATCH);
            return false;
        }
        byte[] value;
        try {
            value = serializer.serialize(topic, record);
        } catch (RuntimeException e) {
            // The registry did not answer or refused the schema: the record cannot be sent.
            failed(topic, key, e);
            return false;
        }
        if (!budget.tryAdmit(kind, key, value.length)) {
            metrics.droppedQueueFull(key, kind == Kind.BATCH);
            return false;
        }
        queue.add(new Pending(kind, topic, key, value, receivedNanos, eventTsMs, events));
        unsettled.incrementAndGet();
        metrics.queueDepth = queue.size();
        metrics.queueBytes = budget.queuedBytes();
        return true;
    }

    private void sendLoop() {
        while (running || !queue.isEmpty()) {
            Pending p;
            try {
                p = queue.poll(100, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (p == null) {
                metrics.queueDepth = queue.size();
                continue;
            }
            budget.release(p.kind(), p.key(), p.value().length); // in the producer's hands now: its own buffer bounds it
            metrics.queueDepth = queue.size();
            metrics.queueBytes = budget.queuedBytes();
            send(p);
        }
    }

    /**
     * Hands one record to the producer. A broker away longer than max.block.ms (no metadata, no buffer
     * space) is no reason to lose it: it waits for the broker, in order, while the bounded queue in
     * front fills and drops, counted, only once full. Unless the bridge is closing. (The producer
     * reports that timeout to the callback, on this thread, before send returns.)
     */
    private void send(Pending p) {
        while (true) {
            boolean[] brokerAway = {false};
            try {
                producer.send(new ProducerRecord<>(p.topic(), p.key(), p.value()), (meta, error) -> {
                    if (error instanceof org.apache.kafka.common.errors.TimeoutException && Thread.currentThread() == sender
                            && running) {
                        brokerAway[0] = true; // not taken: sent again below
                    } else {
                        acked(p, error);
                    }
                });
            } catch (RuntimeException e) {
                // A record over max.request.size, or the producer closing.
                failed(p, e);
                unsettled.decrementAndGet();
                return;
            }
            if (!brokerAway[0]) {
                return;
            }
            long now = System.nanoTime();
            if (now - lastErrorLogNanos > 1_000_000_000L) {
                lastErrorLogNanos = now;
                LOG.warn("Kafka does not take records for {}: holding them in order ({} queued, {} bytes; {} records or {} bytes "
                        + "at most)", p.topic(), queue.size(), budget.queuedBytes(), config.queueCapacity(), config.queueMaxBytes());
            }
        }
    }

    private void acked(Pending p, Exception error) {
        try {
            settled(p, error);
        } finally {
            // After the outcome is handled: a dead letter it offers is unsettled before this record is settled.
            unsettled.decrementAndGet();
        }
    }

    private void settled(Pending p, Exception error) {
        if (error != null) {
            failed(p, error);
            return;
        }
        metrics.acked.increment();
        if (p.kind() == Kind.BATCH) {
            metrics.forwarded(p.key(), p.events(), p.receivedNanos(), p.eventTsMs());
        } else if (p.kind() == Kind.LOAD) {
            metrics.loadReports.increment();
        } else {
            metrics.deadLetters.increment();
        }
    }

    /**
     * A record that could not be sent. An oversize batch becomes a dead letter, serialized on the
     * thread that reports the failure (the sender, or the producer's I/O thread): rare, and the
     * schema is registered once.
     */
    private void failed(Pending p, Exception error) {
        if (p.kind() == Kind.BATCH && (error instanceof RecordTooLargeException || error.getCause() instanceof RecordTooLargeException)) {
            LOG.warn("batch of engine {} is {} bytes, over what {} takes: filed to the dead-letter topic", p.key(), p.value().length,
                    p.topic());
            offer(DeadLetters.of(p.key().getBytes(StandardCharsets.UTF_8), p.value())
                    .setSourceTopic(p.topic()).setSourcePartition(-1).setSourceOffset(-1)
                    .setStage(OVERSIZE_STAGE)
                    .setReason("batch of engine " + p.key() + " is " + p.value().length + " bytes serialized, over what "
                            + p.topic() + " takes (" + error.getMessage() + "); the job sees the gap it leaves")
                    .setErrorClass(RecordTooLargeException.class.getName())
                    .setTsMs(System.currentTimeMillis())
                    .build());
            return;
        }
        failed(p.topic(), p.key(), error);
    }

    private void failed(String topic, String key, Exception error) {
        metrics.sendErrors.increment();
        long now = System.nanoTime();
        // At most one line a second: a broker outage fails every record.
        if (now - lastErrorLogNanos > 1_000_000_000L) {
            lastErrorLogNanos = now;
            LOG.warn("could not send to {} (key {}): {}; such records are lost (counted as send errors)", topic, key,
                    error.toString());
        }
    }

    /** Sends what is queued (for at most {@code timeout}), then closes the producer. */
    @Override
    public void close() {
        close(Duration.ofSeconds(10));
    }

    void close(Duration timeout) {
        running = false;
        try {
            sender.join(timeout.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        producer.close(timeout);
        serializer.close();
    }

    /** Waits until everything queued so far is acknowledged (or failed); for tests and the benchmark. */
    void flush() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (unsettled.get() > 0 && System.nanoTime() < deadline) {
            producer.flush();
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
