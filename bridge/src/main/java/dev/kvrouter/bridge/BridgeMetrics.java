package dev.kvrouter.bridge;

import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The bridge's own counters, shared by every subscription, the scraper and the Kafka outbox; read them
 * with {@link #snapshot()} (cumulative since start) and compare two snapshots for rates.
 */
public final class BridgeMetrics {

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
    volatile int subscriptions;

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
