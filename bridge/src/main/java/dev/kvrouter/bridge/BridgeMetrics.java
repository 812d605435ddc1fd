package dev.kvrouter.bridge;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The bridge's own counters, shared by every subscription, the scraper and the Kafka outbox; read them
 * with {@link #snapshot()} (cumulative since start) and compare two snapshots for rates. The same
 * events also go, per engine, into a Prometheus registry ({@link #scrape()}, served on
 * {@code prometheus.listen}): each has one method here that counts it both ways.
 */
public final class BridgeMetrics {

    /** Latency buckets of the per-engine histograms: 1 ms to 10 s. */
    private static final Duration[] LATENCY_BUCKETS = java.util.stream.LongStream.of(1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000,
            5_000, 10_000).mapToObj(Duration::ofMillis).toArray(Duration[]::new);

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    /** Per engine (its id in the engines file), the meters of that engine; removed with the engine ({@link #forget}). */
    private final Map<String, EngineMeters> engines = new ConcurrentHashMap<>();

    /** What the bridge counts per engine, as {@code kvr_bridge_<name>_total{engine}} with its meaning. */
    enum EngineEvent {
        BATCHES_RECEIVED("KV event batches received from the engine's publishers"),
        BATCHES_FORWARDED("batches acknowledged by Kafka"),
        EVENTS_FORWARDED("KV events in the batches acknowledged by Kafka"),
        GAPS("sequence gaps seen in the engine's batches"),
        BATCHES_MISSING("batches lost for good (not recovered by a replay)"),
        REPLAY_REQUESTS("replay requests sent to the engine"),
        BATCHES_REPLAYED("batches a replay recovered"),
        RESTARTS("engine restarts (its sequence went back)"),
        BATCHES_DROPPED("batches dropped because the queue to Kafka was full"),
        DECODE_ERRORS("messages that did not decode (dead-lettered)");

        final String description;

        EngineEvent(String description) {
            this.description = description;
        }

        String meterName() {
            return "kvr.bridge." + name().toLowerCase(Locale.ROOT).replace('_', '.');
        }
    }

    /** One engine's meters, tagged {@code engine=<id>}: every counter from the start (at 0), and two latency histograms. */
    private final class EngineMeters {
        final List<Meter> all = new ArrayList<>();
        final java.util.EnumMap<EngineEvent, Counter> counters = new java.util.EnumMap<>(EngineEvent.class);
        final Timer ackLatency;
        final Timer eventAge;

        EngineMeters(String engine) {
            for (EngineEvent event : EngineEvent.values()) {
                counters.put(event, Counter.builder(event.meterName()).description(event.description).tag("engine", engine).register(registry));
            }
            all.addAll(counters.values());
            ackLatency = Timer.builder("kvr.bridge.ack.latency").description("a batch, received to acknowledged by Kafka")
                    .tag("engine", engine).serviceLevelObjectives(LATENCY_BUCKETS).register(registry);
            eventAge = Timer.builder("kvr.bridge.event.age")
                    .description("a batch, the engine's timestamp to acknowledged by Kafka (clock skew included)")
                    .tag("engine", engine).serviceLevelObjectives(LATENCY_BUCKETS).register(registry);
            all.add(ackLatency);
            all.add(eventAge);
        }
    }

    /** The engine's meters; null for one not followed (a late acknowledgement after it left the engines file). */
    private EngineMeters of(String engine) {
        if (!followed.contains(engine)) {
            return null;
        }
        EngineMeters m = engines.computeIfAbsent(engine, EngineMeters::new);
        if (!followed.contains(engine)) { // forgotten meanwhile: what was just made must leave too
            forget(engine);
            return null;
        }
        return m;
    }

    /** Engines in the engines file now: only they have series, so the registry stays bounded by the fleet. */
    private final java.util.Set<String> followed = ConcurrentHashMap.newKeySet();

    void follow(String engine) {
        followed.add(engine);
    }

    /** The engine left the engines file: its series leave the scrape. */
    void forget(String engine) {
        followed.remove(engine);
        EngineMeters m = engines.remove(engine);
        if (m != null) {
            m.all.forEach(registry::remove);
        }
    }

    /** Every engine's series, in the Prometheus text format. */
    public String scrape() {
        return registry.scrape();
    }

    void batchReceived(String engine) {
        count(engine, batchesReceived, EngineEvent.BATCHES_RECEIVED, 1);
    }

    void restarted(String engine) {
        count(engine, restarts, EngineEvent.RESTARTS, 1);
    }

    void replayRequested(String engine) {
        count(engine, replayRequests, EngineEvent.REPLAY_REQUESTS, 1);
    }

    void replayed(String engine) {
        count(engine, batchesReplayed, EngineEvent.BATCHES_REPLAYED, 1);
    }

    void undecodable(String engine) {
        count(engine, decodeErrors, EngineEvent.DECODE_ERRORS, 1);
    }

    void gap(String engine, long lost) {
        count(engine, gaps, EngineEvent.GAPS, 1);
        count(engine, batchesMissing, EngineEvent.BATCHES_MISSING, lost);
    }

    /** Events of the engine: in the bridge's total and in the engine's series (while it is followed). */
    private void count(String engine, LongAdder total, EngineEvent event, long n) {
        total.add(n);
        EngineMeters m = of(engine);
        if (m != null) {
            m.counters.get(event).increment(n);
        }
    }

    /** A record the full queue turned away; a batch also counts against its engine. */
    void droppedQueueFull(String engine, boolean batch) {
        if (batch) {
            count(engine, droppedQueueFull, EngineEvent.BATCHES_DROPPED, 1);
        } else {
            droppedQueueFull.increment();
        }
    }

    /** Kafka acknowledged an engine's batch of {@code count} events, received {@code receivedNanos}, stamped {@code eventTsMs}. */
    void forwarded(String engine, int count, long receivedNanos, long eventTsMs) {
        batchesForwarded.increment();
        eventsForwarded.add(count);
        long latencyNanos = System.nanoTime() - receivedNanos;
        long latencyMs = latencyNanos / 1_000_000;
        long ageMs = System.currentTimeMillis() - eventTsMs;
        lastAckLatencyMs.set(latencyMs);
        maxAckLatencyMs.accumulateAndGet(latencyMs, Math::max);
        lastEventAgeMs.set(ageMs);
        EngineMeters m = of(engine);
        if (m != null) {
            m.counters.get(EngineEvent.BATCHES_FORWARDED).increment();
            m.counters.get(EngineEvent.EVENTS_FORWARDED).increment(count);
            m.ackLatency.record(latencyNanos, TimeUnit.NANOSECONDS);
            m.eventAge.record(Math.max(0, ageMs), TimeUnit.MILLISECONDS);
        }
    }

    final LongAdder batchesReceived = new LongAdder();
    final LongAdder batchesForwarded = new LongAdder();
    final LongAdder eventsForwarded = new LongAdder();
    final LongAdder gaps = new LongAdder();
    final LongAdder batchesMissing = new LongAdder();
    final LongAdder replayRequests = new LongAdder();
    final LongAdder batchesReplayed = new LongAdder();
    final LongAdder restarts = new LongAdder();
    final LongAdder decodeErrors = new LongAdder();
    final LongAdder droppedQueueFull = new LongAdder();
    final LongAdder sendErrors = new LongAdder();
    final LongAdder loadReports = new LongAdder();
    final LongAdder scrapeErrors = new LongAdder();
    final LongAdder deadLetters = new LongAdder();
    final LongAdder acked = new LongAdder();
    final LongAdder resubscribes = new LongAdder();
    /** Receipt to Kafka acknowledgement of the latest acknowledged batch. */
    final AtomicLong lastAckLatencyMs = new AtomicLong();
    /** Engine timestamp to Kafka acknowledgement of the latest acknowledged batch (includes clock skew). */
    final AtomicLong lastEventAgeMs = new AtomicLong();
    final AtomicLong maxAckLatencyMs = new AtomicLong();
    volatile int queueDepth;
    volatile long queueBytes;
    volatile int subscriptions;

    public BridgeMetrics() {
        Gauge.builder("kvr.bridge.queue.depth", this, m -> m.queueDepth).description("records waiting for the Kafka producer")
                .register(registry);
        Gauge.builder("kvr.bridge.queue.bytes", this, m -> m.queueBytes).description("serialized bytes waiting for the Kafka producer")
                .baseUnit("bytes").register(registry);
        Gauge.builder("kvr.bridge.publishers", this, m -> m.subscriptions).description("publishers subscribed (engines x data-parallel ranks)")
                .register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("kvr.bridge.send.errors", sendErrors, LongAdder::sum)
                .description("records Kafka did not take (after the producer's retries)").register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("kvr.bridge.load.reports", loadReports, LongAdder::sum)
                .description("engine load reports (heartbeats) acknowledged by Kafka").register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("kvr.bridge.scrape.errors", scrapeErrors, LongAdder::sum)
                .description("engine metrics scrapes that failed").register(registry);
    }

    /**
     * Cumulative figures. {@code batchesMissing} counts batches lost for good (gaps not recovered by
     * replay); {@code droppedQueueFull} counts batches the bridge itself dropped because Kafka was
     * slower than the engines (the job sees each as a gap too).
     */
    public record Snapshot(long nanoTime, long batchesReceived, long batchesForwarded, long eventsForwarded, long gaps,
                           long batchesMissing, long replayRequests, long batchesReplayed, long restarts, long decodeErrors,
                           long droppedQueueFull, long sendErrors, long acked, long loadReports, long scrapeErrors,
                           long deadLetters, int queueDepth, long lastAckLatencyMs, long maxAckLatencyMs,
                           long lastEventAgeMs, int subscriptions, long resubscribes) {

        /** One log line: rates since {@code before}, then totals. */
        public String describeSince(Snapshot before) {
            double seconds = Math.max(1e-9, (nanoTime - before.nanoTime) / 1e9);
            return String.format(Locale.ROOT,
                    "%.1f batches/s, %.1f events/s, %d publishers (%d resubscribed) | gaps %d (+%d), missing %d, replays %d (%d batches recovered), "
                            + "restarts %d, decode errors %d, dropped %d, send errors %d | queue %d, ack latency %d ms (max %d), "
                            + "event age %d ms | load reports %d, scrape errors %d",
                    (batchesForwarded - before.batchesForwarded) / seconds, (eventsForwarded - before.eventsForwarded) / seconds,
                    subscriptions, resubscribes, gaps, gaps - before.gaps, batchesMissing, replayRequests, batchesReplayed, restarts, decodeErrors,
                    droppedQueueFull, sendErrors, queueDepth, lastAckLatencyMs, maxAckLatencyMs, lastEventAgeMs, loadReports,
                    scrapeErrors);
        }
    }

    public Snapshot snapshot() {
        return new Snapshot(System.nanoTime(), batchesReceived.sum(), batchesForwarded.sum(), eventsForwarded.sum(), gaps.sum(),
                batchesMissing.sum(), replayRequests.sum(), batchesReplayed.sum(), restarts.sum(), decodeErrors.sum(),
                droppedQueueFull.sum(), sendErrors.sum(), acked.sum(), loadReports.sum(), scrapeErrors.sum(), deadLetters.sum(),
                queueDepth, lastAckLatencyMs.get(), maxAckLatencyMs.get(), lastEventAgeMs.get(), subscriptions, resubscribes.sum());
    }
}
