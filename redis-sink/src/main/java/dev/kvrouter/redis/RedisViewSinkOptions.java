package dev.kvrouter.redis;

import dev.kvrouter.contract.RedisSecurity;
import dev.kvrouter.contract.ViewConnection;
import dev.kvrouter.contract.ViewLayout;
import java.io.Serializable;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;

/**
 * Settings of the Redis view sink, validated once with every problem reported together.
 *
 * @param redisUrl          {@code redis://host:port[/db]}, or {@code redis-cluster://host:port[,host:port…]}
 * @param keyPrefix         prefix of every view key (default {@code kvr:})
 * @param batchSize         commands per pipelined batch (one Lettuce flush)
 * @param maxInFlightBatches batches sent but not yet answered before the writer waits
 * @param maxBufferedWrites coalesced writes held before a flush is forced (backpressure)
 * @param flushIntervalMs   how often buffered writes and the view's freshness stamp go out
 * @param viewTtlMs         TTL of the meta key and the engine table: with the pipeline stopped, the
 *                          view stops vouching for any engine after this long
 * @param commandTimeoutMs  Lettuce command timeout
 * @param connectTimeoutMs  Lettuce connect timeout
 * @param maxRetries        retries of a failed batch (connection errors, timeouts, LOADING) before the job fails:
 *                          the backoff doubles from 50 ms to at most 2 s, so the default rides out about 30 s of
 *                          Redis restarting or failing over without restarting the job
 * @param chunkTokens       canonical chunk size, published in meta for balancers
 * @param tagDepth          chain depth of the group tag, published in meta for balancers
 * @param busyFactor        k: an engine whose load exceeds k x fleet mean is spilled from
 * @param confidenceFloor   entries whose confidence falls below this are not used
 * @param clientCap         the largest share of one client's requests in flight that pick sends to one engine
 * @param clientMinInflight the cap applies from this many requests of the client in flight
 * @param extraMeta         further figures for the meta key (the cost model's, for pick's cost view)
 * @param security          Redis credentials and TLS (the client config's {@code redis.*}); never in the URL
 */
public record RedisViewSinkOptions(String redisUrl, String keyPrefix, int batchSize, int maxInFlightBatches,
                                   int maxBufferedWrites, long flushIntervalMs, long viewTtlMs, long commandTimeoutMs,
                                   long connectTimeoutMs, int maxRetries, int chunkTokens, int tagDepth,
                                   double busyFactor, double confidenceFloor, double clientCap, int clientMinInflight,
                                   java.util.TreeMap<String, String> extraMeta, RedisSecurity security)
        implements Serializable {

    public RedisViewSinkOptions {
        security = security == null ? RedisSecurity.none() : security;
    }

    /** Retries of a failed batch by default: about 30 s of backoff. */
    public static final int DEFAULT_MAX_RETRIES = 20;

    public static RedisViewSinkOptions defaults(String redisUrl) {
        return new RedisViewSinkOptions(redisUrl, ViewLayout.DEFAULT_KEY_PREFIX, 1000, 4, 20_000, 50, 30_000, 2_000, 2_000,
                DEFAULT_MAX_RETRIES, ViewLayout.DEFAULT_CHUNK_TOKENS, ViewLayout.DEFAULT_TAG_DEPTH, ViewLayout.DEFAULT_BUSY_FACTOR,
                ViewLayout.DEFAULT_CONFIDENCE_FLOOR, ViewLayout.DEFAULT_CLIENT_CAP, ViewLayout.DEFAULT_CLIENT_MIN_INFLIGHT,
                new java.util.TreeMap<>(), RedisSecurity.none());
    }

    /** The defaults for this Redis, to change field by field. */
    public static Builder builder(String redisUrl) {
        return new Builder(defaults(redisUrl));
    }

    /** These options, to change field by field. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    public RedisViewSinkOptions withKeyPrefix(String prefix) {
        return toBuilder().keyPrefix(prefix).build();
    }

    public RedisViewSinkOptions withView(int chunk, int depth, double k, double floor, long ttlMs) {
        return toBuilder().chunkTokens(chunk).tagDepth(depth).busyFactor(k).confidenceFloor(floor).viewTtlMs(ttlMs).build();
    }

    public RedisViewSinkOptions withClientCap(double cap, int minInflight) {
        return toBuilder().clientCap(cap).clientMinInflight(minInflight).build();
    }

    public RedisViewSinkOptions withSecurity(RedisSecurity security) {
        return toBuilder().security(security).build();
    }

    public RedisViewSinkOptions withFlushInterval(long ms) {
        return toBuilder().flushIntervalMs(ms).build();
    }

    /** Adds figures to the meta key. */
    public RedisViewSinkOptions withMeta(java.util.Map<String, String> figures) {
        java.util.TreeMap<String, String> merged = new java.util.TreeMap<>(extraMeta);
        merged.putAll(figures);
        return toBuilder().extraMeta(merged).build();
    }

    /**
     * The figures the sink writes to the meta key besides its clock ({@code updated_ms},
     * {@code watermark_ms}): what kvr_pick reads of the view's settings and the cost model.
     */
    public java.util.Map<String, String> metaFields() {
        java.util.Map<String, String> meta = new java.util.LinkedHashMap<>();
        meta.put("chunk_tokens", Integer.toString(chunkTokens));
        meta.put("tag_depth", Integer.toString(tagDepth));
        meta.put("busy_factor", Double.toString(busyFactor));
        meta.put("confidence_floor", Double.toString(confidenceFloor));
        meta.put("client_cap", Double.toString(clientCap));
        meta.put("client_min_inflight", Integer.toString(clientMinInflight));
        meta.put("layout", Integer.toString(ViewLayout.LAYOUT_VERSION));
        meta.putAll(extraMeta);
        return meta;
    }

    /** A mutable copy of the options; {@link #build()} makes them again (validate them with {@link #problems()}). */
    public static final class Builder {
        private String redisUrl;
        private String keyPrefix;
        private int batchSize;
        private int maxInFlightBatches;
        private int maxBufferedWrites;
        private long flushIntervalMs;
        private long viewTtlMs;
        private long commandTimeoutMs;
        private long connectTimeoutMs;
        private int maxRetries;
        private int chunkTokens;
        private int tagDepth;
        private double busyFactor;
        private double confidenceFloor;
        private double clientCap;
        private int clientMinInflight;
        private java.util.TreeMap<String, String> extraMeta;
        private RedisSecurity security;

        private Builder(RedisViewSinkOptions o) {
            redisUrl = o.redisUrl;
            keyPrefix = o.keyPrefix;
            batchSize = o.batchSize;
            maxInFlightBatches = o.maxInFlightBatches;
            maxBufferedWrites = o.maxBufferedWrites;
            flushIntervalMs = o.flushIntervalMs;
            viewTtlMs = o.viewTtlMs;
            commandTimeoutMs = o.commandTimeoutMs;
            connectTimeoutMs = o.connectTimeoutMs;
            maxRetries = o.maxRetries;
            chunkTokens = o.chunkTokens;
            tagDepth = o.tagDepth;
            busyFactor = o.busyFactor;
            confidenceFloor = o.confidenceFloor;
            clientCap = o.clientCap;
            clientMinInflight = o.clientMinInflight;
            extraMeta = new java.util.TreeMap<>(o.extraMeta);
            security = o.security;
        }

        public Builder keyPrefix(String v) { keyPrefix = v; return this; }
        public Builder batchSize(int v) { batchSize = v; return this; }
        public Builder maxInFlightBatches(int v) { maxInFlightBatches = v; return this; }
        public Builder maxBufferedWrites(int v) { maxBufferedWrites = v; return this; }
        public Builder flushIntervalMs(long v) { flushIntervalMs = v; return this; }
        public Builder viewTtlMs(long v) { viewTtlMs = v; return this; }
        public Builder commandTimeoutMs(long v) { commandTimeoutMs = v; return this; }
        public Builder connectTimeoutMs(long v) { connectTimeoutMs = v; return this; }
        public Builder maxRetries(int v) { maxRetries = v; return this; }
        public Builder chunkTokens(int v) { chunkTokens = v; return this; }
        public Builder tagDepth(int v) { tagDepth = v; return this; }
        public Builder busyFactor(double v) { busyFactor = v; return this; }
        public Builder confidenceFloor(double v) { confidenceFloor = v; return this; }
        public Builder clientCap(double v) { clientCap = v; return this; }
        public Builder clientMinInflight(int v) { clientMinInflight = v; return this; }
        public Builder extraMeta(java.util.TreeMap<String, String> v) { extraMeta = new java.util.TreeMap<>(v); return this; }
        public Builder security(RedisSecurity v) { security = v; return this; }

        public RedisViewSinkOptions build() {
            return new RedisViewSinkOptions(redisUrl, keyPrefix, batchSize, maxInFlightBatches, maxBufferedWrites, flushIntervalMs,
                    viewTtlMs, commandTimeoutMs, connectTimeoutMs, maxRetries, chunkTokens, tagDepth, busyFactor, confidenceFloor,
                    clientCap, clientMinInflight, extraMeta, security);
        }
    }

    /** Every problem at once; empty when the options are usable. */
    public List<String> problems() {
        List<String> p = new ArrayList<>();
        String url = redisUrl == null ? "" : redisUrl;
        String shown = RedisSecurity.redactUrl(url);
        List<String> credentials = RedisSecurity.urlProblems(url);
        p.addAll(credentials);
        if (!credentials.isEmpty()) {
            // Said already; the shape checks below would only repeat the URL.
        } else if (ViewConnection.isCluster(url)) {
            if (!url.substring(ViewConnection.CLUSTER_SCHEME.length()).matches("[^,:/]+:\\d+(,[^,:/]+:\\d+)*")) {
                p.add("redis url '" + shown + "' must look like redis-cluster://host:port[,host:port...]");
            }
        } else {
            try {
                URI u = URI.create(url);
                if (!"redis".equals(u.getScheme()) && !"rediss".equals(u.getScheme()) || u.getHost() == null) {
                    p.add("redis url '" + shown + "' must look like redis://host:port, rediss://host:port (TLS) or "
                            + "redis-cluster://host:port[,host:port...]");
                }
            } catch (IllegalArgumentException e) {
                p.add("redis url '" + shown + "' is not a URL");
            }
        }
        if (keyPrefix == null || keyPrefix.isEmpty() || keyPrefix.contains("{") || keyPrefix.contains("}")) {
            p.add("key prefix must be non-empty and free of { } (they mark Redis Cluster hash tags)");
        }
        positive(p, "batch size", batchSize);
        positive(p, "max in-flight batches", maxInFlightBatches);
        positive(p, "max buffered writes", maxBufferedWrites);
        positive(p, "flush interval ms", flushIntervalMs);
        positive(p, "command timeout ms", commandTimeoutMs);
        positive(p, "connect timeout ms", connectTimeoutMs);
        positive(p, "chunk tokens", chunkTokens);
        positive(p, "tag depth", tagDepth);
        if (maxRetries < 0) {
            p.add("max retries must be 0 or more, was " + maxRetries);
        }
        if (viewTtlMs < 1000) {
            p.add("view TTL must be at least 1000 ms, was " + viewTtlMs);
        } else if (viewTtlMs < 3 * flushIntervalMs) {
            p.add("view TTL (" + viewTtlMs + " ms) must be at least 3 flush intervals (" + flushIntervalMs + " ms), or the view blinks");
        }
        if (!(busyFactor > 1)) {
            p.add("busy factor must be above 1, was " + busyFactor);
        }
        if (!(clientCap > 0 && clientCap <= 1)) {
            p.add("client cap must be above 0 and at most 1, was " + clientCap);
        }
        positive(p, "client min in-flight", clientMinInflight);
        if (!(confidenceFloor > 0 && confidenceFloor < 1)) {
            p.add("confidence floor must be between 0 and 1, was " + confidenceFloor);
        }
        return p;
    }

    private static void positive(List<String> p, String name, long v) {
        if (v < 1) {
            p.add(name + " must be at least 1, was " + v);
        }
    }
}
