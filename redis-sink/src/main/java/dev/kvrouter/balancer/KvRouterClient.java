package dev.kvrouter.balancer;

import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.redis.EngineEntry;
import dev.kvrouter.redis.RedisClients;
import dev.kvrouter.redis.ViewLayout;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * The Java balancer's side of the view: computes the prompt's canonical block hashes, asks Redis
 * {@code kvr_pick} in one round trip, and falls back to least-loaded routing — saying so — when the
 * view is older than {@code maxViewAge} or Redis does not answer.
 */
public final class KvRouterClient implements AutoCloseable {

    /** Where an answer came from. */
    public enum Source { VIEW, FALLBACK_STALE_VIEW, FALLBACK_REDIS_DOWN, NO_ENGINE }

    /**
     * @param engineId      the engine to send the request to; empty when no engine is known at all
     * @param matchedBlocks canonical blocks of the prompt the engine is expected to hold
     * @param reason        AFFINITY, REPLICA, SPILL_HOT, SPILL_BUSY, COLD, FALLBACK_LOAD_ONLY, NO_VIEW
     * @param viewAgeMs     age of the view at the pick; -1 when there was none
     * @param confidence    confidence that the matched blocks are still there, 0..1
     */
    public record Pick(String engineId, int matchedBlocks, String reason, long viewAgeMs, double confidence, Source source) {}

    /**
     * @param maxViewAge       older than this, the view is not trusted: least-loaded routing instead
     * @param timeout          per Redis command; a balancer cannot wait long
     * @param connectTimeout   for connecting and the connection handshake (the first one warms up the JVM too)
     * @param maxBlocks        longest prompt prefix looked up, in canonical blocks
     * @param snapshotInterval how often the engine table is copied in the background, for
     *                         least-loaded routing while Redis does not answer
     */
    public record Options(String redisUrl, String keyPrefix, int chunkTokens, int tagDepth, Duration maxViewAge,
                          Duration timeout, Duration connectTimeout, int maxBlocks, Duration snapshotInterval) {
        public static Options defaults(String redisUrl) {
            return new Options(redisUrl, "kvr:", 16, 2, Duration.ofSeconds(2), Duration.ofMillis(100), Duration.ofSeconds(2),
                    4096, Duration.ofSeconds(1));
        }

        public Options withKeyPrefix(String prefix) {
            return new Options(redisUrl, prefix, chunkTokens, tagDepth, maxViewAge, timeout, connectTimeout, maxBlocks, snapshotInterval);
        }

        public Options withMaxViewAge(Duration age) {
            return new Options(redisUrl, keyPrefix, chunkTokens, tagDepth, age, timeout, connectTimeout, maxBlocks, snapshotInterval);
        }
    }

    private final Options options;
    private final ViewLayout layout;
    private final CanonicalBlockHasher hasher;
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisCommands<String, String> redis;
    /** Last engine table read, for load-only routing while Redis is unreachable. */
    private volatile Map<String, String> lastEngines = Map.of();
    private final java.util.concurrent.ScheduledExecutorService snapshots;

    public KvRouterClient(Options options) {
        this.options = options;
        this.layout = new ViewLayout(options.keyPrefix());
        this.hasher = new CanonicalBlockHasher(options.chunkTokens());
        this.client = RedisClients.create(options.redisUrl(), options.timeout(), options.connectTimeout(), 1024);
        this.connection = client.connect();
        this.redis = connection.sync();
        this.snapshots = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "kvr-engine-snapshot");
            t.setDaemon(true);
            return t;
        });
        long every = options.snapshotInterval().toMillis();
        snapshots.scheduleWithFixedDelay(this::refreshSnapshot, 0, every, java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    private void refreshSnapshot() {
        try {
            engines();
        } catch (RuntimeException e) {
            // Redis unreachable: keep the last copy, which is what the fallback is for.
        }
    }

    /** Picks an engine for a prompt given as token ids. */
    public Pick pick(String model, String loraName, int[] tokens, List<String> extraKeys) {
        return pick(hasher.chain(model, loraName, tokens, extraKeys));
    }

    /** Picks an engine for a prompt given as its canonical block hashes, first to last. */
    public Pick pick(long[] chain) {
        int n = Math.min(chain.length, options.maxBlocks());
        String[] keys = {layout.metaKey(), layout.enginesKey(),
                layout.groupKey(n > 0 ? ViewLayout.tag(chain, 1, options.tagDepth()) : 0),
                layout.groupKey(n > 1 ? ViewLayout.tag(chain, 2, options.tagDepth()) : 0)};
        String[] args = new String[n + 2];
        args[0] = Long.toString(options.maxViewAge().toMillis());
        args[1] = Integer.toString(n);
        for (int i = 0; i < n; i++) {
            args[i + 2] = ViewLayout.hex(chain[i]);
        }
        List<Object> answer;
        try {
            answer = redis.fcallReadOnly(ViewLayout.PICK_FUNCTION, ScriptOutputType.MULTI, keys, args);
        } catch (RedisException e) {
            return leastLoaded(Source.FALLBACK_REDIS_DOWN);
        }
        String engine = (String) answer.get(0);
        String reason = (String) answer.get(2);
        long age = (Long) answer.get(3);
        if ("NO_VIEW".equals(reason)) {
            return leastLoaded(Source.FALLBACK_STALE_VIEW);
        }
        Source source = "FALLBACK_LOAD_ONLY".equals(reason) ? Source.FALLBACK_STALE_VIEW
                : engine.isEmpty() ? Source.NO_ENGINE : Source.VIEW;
        return new Pick(engine, ((Long) answer.get(1)).intValue(), reason, age, Double.parseDouble((String) answer.get(4)), source);
    }

    /** The engine table as the view publishes it (also refreshes the fallback's copy). */
    public Map<String, EngineEntry> engines() {
        Map<String, String> raw = redis.hgetall(layout.enginesKey());
        lastEngines = raw;
        Map<String, EngineEntry> engines = new java.util.TreeMap<>();
        raw.forEach((id, v) -> engines.put(id, EngineEntry.decode(v)));
        return engines;
    }

    private Pick leastLoaded(Source wanted) {
        Source source = wanted;
        if (source != Source.FALLBACK_REDIS_DOWN) {
            try {
                engines();
            } catch (RedisException e) {
                source = Source.FALLBACK_REDIS_DOWN;
            }
        }
        Source answered = source;
        // Copy once: the snapshot thread may replace it meanwhile.
        Map<String, String> known = lastEngines;
        List<Map.Entry<String, EngineEntry>> live = new ArrayList<>();
        known.forEach((id, v) -> live.add(Map.entry(id, EngineEntry.decode(v))));
        return live.stream()
                .filter(e -> !"DRAINING".equals(e.getValue().status()))
                .min(Comparator.<Map.Entry<String, EngineEntry>>comparingInt(e -> e.getValue().load()).thenComparing(Map.Entry::getKey))
                .map(e -> new Pick(e.getKey(), 0, "FALLBACK_LOAD_ONLY", -1, 0, answered))
                .orElse(new Pick("", 0, "NO_VIEW", -1, 0, Source.NO_ENGINE));
    }

    @Override
    public void close() {
        snapshots.shutdownNow();
        try {
            connection.close();
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
        }
    }
}
