package dev.kvrouter.redis;

import dev.kvrouter.contract.RedisSecurity;
import dev.kvrouter.contract.ViewConnection;
import dev.kvrouter.contract.ViewLayout;
import io.lettuce.core.ExpireArgs;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.groups.SinkWriterMetricGroup;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;

/**
 * The view sink's writer, after Flink's async sink writer: bounded buffer, bounded batches and
 * in-flight requests, retryable vs fatal errors, metrics. The Lettuce client is opened here and
 * closed in {@link #close()}.
 */
final class RedisViewWriter implements SinkWriter<ViewWrite> {

    private record FieldKey(ViewWrite.Kind kind, long tag, String field) {}

    private final RedisViewSinkOptions options;
    private final ViewLayout layout;
    private final ProcessingTimeService timers;
    private final ViewConnection connection;
    private final RedisClusterAsyncCommands<String, String> redis;

    /** Newest write per (key, field) since the last flush; insertion-ordered. */
    /** Values a latency histogram keeps (its quantiles are of these last ones). */
    static final int HISTOGRAM_WINDOW = 4_096;

    private final LinkedHashMap<FieldKey, ViewWrite> pending = new LinkedHashMap<>();
    private long maxEventTimeMs = 0;
    private volatile boolean closed;

    private final Counter writesIn;
    private final Counter writesCoalesced;
    private final Counter commandsSent;
    private final Counter retries;
    private final Counter batches;
    /** Event time to acknowledged in Redis, per block and engine write: what an operator alerts on. */
    private final Histogram freshnessMs;
    /** One batch, sent to acknowledged (retries included). */
    private final Histogram batchLatencyMs;
    /** When the last engine report was written (wall clock); 0 before the first. */
    private long reportedAtMs;
    /** The freshness last put in the meta key. */
    private long stampedMs;
    private volatile long lastFlushMs;
    private volatile long lastFlushWrites;

    RedisViewWriter(RedisViewSinkOptions options, ProcessingTimeService timers, SinkWriterMetricGroup metrics) throws IOException {
        this.options = options;
        this.layout = new ViewLayout(options.keyPrefix());
        this.timers = timers;
        try {
            this.connection = ViewConnection.open(options.redisUrl(), options.security(), Duration.ofMillis(options.commandTimeoutMs()),
                    Duration.ofMillis(options.connectTimeoutMs()), Math.max(options.batchSize() * options.maxInFlightBatches() * 4, 1024));
        } catch (RedisException e) {
            throw new IOException("cannot connect to Redis at " + RedisSecurity.redactUrl(options.redisUrl()) + ": " + e.getMessage(), e);
        }
        loadFunctions();
        // From here on commands queue until flushCommands(): one batch, one write.
        connection.setAutoFlushCommands(false);
        this.redis = connection.async();

        // Prometheus names (units in the name, counters ending in _total); Flink's reporter prefixes
        // them with the operator scope (flink_taskmanager_job_task_operator_) and exports a
        // histogram as a summary of its last HISTOGRAM_WINDOW values.
        this.writesIn = metrics.counter("kvr_view_writes_total");
        this.writesCoalesced = metrics.counter("kvr_view_writes_coalesced_total");
        this.commandsSent = metrics.counter("kvr_redis_commands_total");
        this.retries = metrics.counter("kvr_redis_batch_retries_total");
        this.batches = metrics.counter("kvr_redis_batches_total");
        this.freshnessMs = metrics.histogram("kvr_view_freshness_ms", new DescriptiveStatisticsHistogram(HISTOGRAM_WINDOW));
        this.batchLatencyMs = metrics.histogram("kvr_redis_batch_latency_ms", new DescriptiveStatisticsHistogram(HISTOGRAM_WINDOW));
        metrics.gauge("kvr_view_writes_buffered", () -> pending.size());
        metrics.gauge("kvr_last_flush_duration_ms", () -> lastFlushMs);
        metrics.gauge("kvr_last_flush_writes", () -> lastFlushWrites);
        scheduleFlush();
    }

    /** The pick library, replaced so that a new job version brings its own functions (never a later library by an older one). */
    private void loadFunctions() throws IOException {
        try {
            connection.loadViewFunctions();
        } catch (RedisException e) {
            connection.close();
            throw new IOException("cannot load the kvrouter function library into Redis (Redis 7 or newer is needed): "
                    + e.getMessage(), e);
        } catch (IllegalStateException e) {
            connection.close();
            throw new IOException(e.getMessage(), e);
        }
    }

    @Override
    public void write(ViewWrite element, Context context) throws IOException, InterruptedException {
        writesIn.inc();
        if (element.kind == ViewWrite.Kind.ENGINE) {
            // An engine's report came through the job: data flows. The job's own clock (expiries, a
            // stalled input's timers) writes blocks, never engines, so it does not make the view fresh.
            reportedAtMs = System.currentTimeMillis();
        }
        maxEventTimeMs = Math.max(maxEventTimeMs, element.eventTimeMs);
        if (pending.put(new FieldKey(element.kind, element.tag, element.field), element) != null) {
            writesCoalesced.inc();
        }
        if (pending.size() >= options.maxBufferedWrites()) {
            flushPending();
        }
    }

    /** Called at every checkpoint: nothing written before it may still be in the buffer or in flight. */
    @Override
    public void flush(boolean endOfInput) throws IOException, InterruptedException {
        flushPending();
    }

    // Timer path: flushes on a fixed interval (so a quiet stream still reaches Redis within it) and
    // refreshes the freshness stamp; it re-registers itself until the writer is closed.
    private void scheduleFlush() {
        timers.registerTimer(timers.getCurrentProcessingTime() + options.flushIntervalMs(), time -> {
            if (closed) {
                return;
            }
            flushPending();
            scheduleFlush();
        });
    }

    private void flushPending() throws IOException, InterruptedException {
        long started = System.nanoTime();
        List<ViewWrite> writes = new ArrayList<>(pending.values());
        pending.clear();
        long now = System.currentTimeMillis();
        ArrayDeque<List<RedisFuture<?>>> inFlight = new ArrayDeque<>();
        // Commands are queued on the connection and sent at flushCommands(): one batch, one flush.
        Iterator<ViewWrite> it = writes.iterator();
        List<ViewWrite> batchWrites = new ArrayList<>();
        while (it.hasNext()) {
            batchWrites.add(it.next());
            if (batchWrites.size() >= options.batchSize() || !it.hasNext()) {
                inFlight.add(send(batchWrites, now));
                batchWrites = new ArrayList<>();
                if (inFlight.size() >= options.maxInFlightBatches()) {
                    await(inFlight.poll(), now);
                }
            }
        }
        inFlight.add(sendMeta(now));
        while (!inFlight.isEmpty()) {
            await(inFlight.poll(), now);
        }
        lastFlushWrites = writes.size();
        lastFlushMs = (System.nanoTime() - started) / 1_000_000;
    }

    /**
     * Sends one batch. Writes to the same hash go out as one HSET (all fields set) and one HDEL (all
     * fields deleted), and a group key's expiry as one EXPIRE NX plus one EXPIRE GT with the latest
     * expiry among its fields: a chain's blocks share a group, so a batch of stored blocks costs a
     * few commands, not a few per block.
     */
    private List<RedisFuture<?>> send(List<ViewWrite> writes, long now) {
        Map<String, Map<String, String>> sets = new LinkedHashMap<>();
        Map<String, List<String>> deletes = new LinkedHashMap<>();
        Map<String, Long> expiries = new LinkedHashMap<>();
        // A chain's blocks share a group and arrive together: its key is formatted once per run of them.
        long groupTag = 0;
        String groupKey = null;
        for (ViewWrite w : writes) {
            if (w.kind == ViewWrite.Kind.BLOCK && (groupKey == null || w.tag != groupTag)) {
                groupTag = w.tag;
                groupKey = layout.groupKey(w.tag);
            }
            String key = switch (w.kind) {
                case META -> layout.metaKey();
                case RATIOS -> layout.ratiosKey();
                case CLASS_POLICY -> layout.classesKey();
                case CLIENTS -> layout.clientsKey();
                case ENGINE -> layout.enginesKey();
                case BLOCK -> groupKey;
            };
            if (w.value == null) {
                deletes.computeIfAbsent(key, k -> new ArrayList<>()).add(w.field);
            } else {
                sets.computeIfAbsent(key, k -> new LinkedHashMap<>()).put(w.field, w.value);
                if (w.kind == ViewWrite.Kind.BLOCK) {
                    expiries.merge(key, w.expireAtMs, Math::max);
                }
            }
        }
        List<RedisFuture<?>> futures = new ArrayList<>(sets.size() + deletes.size() + 2 * expiries.size());
        // The buffer keeps one write per field, so no field is both set and deleted here.
        deletes.forEach((key, fields) -> futures.add(redis.hdel(key, fields.toArray(String[]::new))));
        sets.forEach((key, fields) -> futures.add(redis.hset(key, fields)));
        expiries.forEach((key, expireAt) -> {
            // A new key has no TTL and GT never sets one: NX gives it one, GT only ever extends it.
            long ttl = Math.max(1, (expireAt - now + 999) / 1000 + 1);
            futures.add(redis.expire(key, ttl, ExpireArgs.Builder.nx()));
            futures.add(redis.expire(key, ttl, ExpireArgs.Builder.gt()));
        });
        connection.flushCommands();
        commandsSent.inc(futures.size());
        return new BatchFutures(futures, writes);
    }

    private List<RedisFuture<?>> sendMeta(long now) {
        Map<String, String> meta = new LinkedHashMap<>();
        // The view's freshness: when an engine's report last came through, stamped only when a newer
        // one did (another writer's newer stamp is never overwritten with this one's older one). With
        // no report (the job's input stalled) it stays, the view ages past what balancers trust, and
        // the TTLs below still keep its keys for when input returns.
        if (reportedAtMs > stampedMs) {
            meta.put("updated_ms", Long.toString(reportedAtMs));
            stampedMs = reportedAtMs;
        }
        meta.put("watermark_ms", Long.toString(maxEventTimeMs));
        meta.putAll(options.metaFields());
        List<RedisFuture<?>> f = new ArrayList<>();
        f.add(redis.hset(layout.metaKey(), meta));
        f.add(redis.pexpire(layout.metaKey(), options.viewTtlMs()));
        f.add(redis.pexpire(layout.enginesKey(), options.viewTtlMs()));
        // An operator's class switches are routing state too: they go with the view when the job stops.
        f.add(redis.pexpire(layout.classesKey(), options.viewTtlMs()));
        f.add(redis.pexpire(layout.clientsKey(), options.viewTtlMs()));
        // Ratios are a report, not routing state: they may outlive the view a little, not forever.
        f.add(redis.pexpire(layout.ratiosKey(), Math.max(options.viewTtlMs(), 3_600_000)));
        connection.flushCommands();
        commandsSent.inc(f.size());
        return new BatchFutures(f, List.of());
    }

    /** A sent batch with the writes it carries, so a failed batch can be sent again, and when it was sent. */
    private static final class BatchFutures extends ArrayList<RedisFuture<?>> {
        final List<ViewWrite> writes;
        final long sentNanos = System.nanoTime();

        BatchFutures(List<RedisFuture<?>> futures, List<ViewWrite> writes) {
            super(futures);
            this.writes = writes;
        }
    }

    /** A batch is in Redis: its latency, and each block or engine write's event-to-visible time. */
    private void acknowledged(List<RedisFuture<?>> first) {
        batches.inc();
        if (first instanceof BatchFutures b) {
            batchLatencyMs.update((System.nanoTime() - b.sentNanos) / 1_000_000);
            long now = System.currentTimeMillis();
            for (ViewWrite w : b.writes) {
                if ((w.kind == ViewWrite.Kind.BLOCK || w.kind == ViewWrite.Kind.ENGINE) && w.eventTimeMs > 0) {
                    freshnessMs.update(Math.max(0, now - w.eventTimeMs));
                }
            }
        }
    }

    /**
     * Waits for a batch. A retryable failure (connection lost, timeout, Redis loading or busy)
     * sends the batch again, up to the retry limit with backoff; every command is idempotent (HSET
     * of a full value, HDEL, EXPIRE NX/GT), so a partly applied batch may be sent again. Anything
     * else (wrong type, out of memory, a script error) fails the job with Redis's message.
     */
    private void await(List<RedisFuture<?>> batch, long now) throws IOException, InterruptedException {
        List<RedisFuture<?>> attempt = batch;
        for (int tryNo = 0; ; tryNo++) {
            Throwable failure = null;
            for (RedisFuture<?> f : attempt) {
                try {
                    f.get(options.commandTimeoutMs() * 2, TimeUnit.MILLISECONDS);
                } catch (ExecutionException e) {
                    failure = e.getCause();
                    break;
                } catch (TimeoutException e) {
                    failure = e;
                    break;
                }
            }
            if (failure == null) {
                acknowledged(batch);
                return;
            }
            if (!retryable(failure) || tryNo >= options.maxRetries()) {
                throw new IOException((retryable(failure) ? "Redis kept failing after " + options.maxRetries() + " retries: "
                        : "Redis refused a view write: ") + failure.getMessage(), failure);
            }
            retries.inc();
            Thread.sleep(Math.min(2_000, 50L << tryNo));
            List<ViewWrite> writes = attempt instanceof BatchFutures b ? b.writes : List.of();
            attempt = writes.isEmpty() ? sendMeta(now) : send(writes, now);
        }
    }

    static boolean retryable(Throwable t) {
        if (t instanceof RedisConnectionException || t instanceof RedisCommandTimeoutException
                || t instanceof TimeoutException || t instanceof java.io.IOException) {
            return true;
        }
        if (t instanceof RedisCommandExecutionException e && e.getMessage() != null) {
            String m = e.getMessage();
            return m.startsWith("LOADING") || m.startsWith("BUSY") || m.startsWith("TRYAGAIN") || m.startsWith("CLUSTERDOWN");
        }
        // "Connection closed", and "Currently not connected. Commands are rejected." while reconnecting.
        return t instanceof io.lettuce.core.RedisException && t.getMessage() != null
                && t.getMessage().toLowerCase(java.util.Locale.ROOT).contains("connect");
    }

    @Override
    public void close() throws Exception {
        closed = true;
        connection.close();
    }
}
