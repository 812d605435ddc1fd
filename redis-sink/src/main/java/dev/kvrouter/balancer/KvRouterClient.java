package dev.kvrouter.balancer;

import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.redis.EngineEntry;
import dev.kvrouter.redis.ViewConnection;
import dev.kvrouter.redis.ViewLayout;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * The Java balancer's side of the view: computes the prompt's canonical block hashes, asks Redis
 * {@code kvr_pick} in one round trip, and falls back to least-loaded routing — saying so — when the
 * view is older than {@code maxViewAge} or Redis does not answer.
 *
 * <p>Engines report their load about once a second; between two reports this client's own picks
 * are load the engine table cannot show. The client remembers its last {@value #RECENT_PICKS} picks
 * (at most {@value #RECENT_PICKS_MS} ms back) and every pick counts those made after an engine
 * measured its load as waiting there, so placements between reports spread instead of all landing
 * on the engine that was least loaded at the last report. With the view's prefill rate known, the
 * same picks say how much prefill each engine still has queued from this client, and a request
 * goes where it costs the least delay ({@link PickPolicy#lessDelayThan}).
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
     * @param saving        the cost view: expected outcome and what it saves
     * @param handoff       disaggregated serving: the decode engine and the hand-off's milliseconds; NONE without a DECODE pool
     */
    public record Pick(String engineId, int matchedBlocks, String reason, long viewAgeMs, double confidence, Source source,
                       PickPolicy.Saving saving, PickPolicy.Handoff handoff) {

        /** A pick in a unified fleet (no decode pool). */
        public Pick(String engineId, int matchedBlocks, String reason, long viewAgeMs, double confidence, Source source,
                    PickPolicy.Saving saving) {
            this(engineId, matchedBlocks, reason, viewAgeMs, confidence, source, saving, PickPolicy.Handoff.NONE);
        }
    }

    /**
     * @param maxViewAge       older than this, the view is not trusted: least-loaded routing instead
     * @param timeout          per Redis command; a balancer cannot wait long
     * @param connectTimeout   for connecting and the connection handshake (the first one warms up the JVM too)
     * @param maxBlocks        longest prompt prefix looked up, in canonical blocks
     * @param snapshotInterval how often the engine table (and, picking client-side, the view's meta
     *                         and the roots read) is copied in the background
     * @param clientSide       pick in this client from plain reads (two commands on the group keys,
     *                         roots cached for one snapshot interval) instead of {@code kvr_pick};
     *                         for Redis Cluster, where one pick's keys sit in several slots
     * @param countsOwnPicks   each answer is a request sent: counted as load on its engine until the
     *                         engine reports (false for a client that only looks, see {@link #observing()})
     */
    public record Options(String redisUrl, String keyPrefix, int chunkTokens, int tagDepth, Duration maxViewAge,
                          Duration timeout, Duration connectTimeout, int maxBlocks, Duration snapshotInterval,
                          boolean clientSide, boolean countsOwnPicks) {
        public static Options defaults(String redisUrl) {
            return new Options(redisUrl, "kvr:", 16, 2, Duration.ofSeconds(2), Duration.ofMillis(100), Duration.ofSeconds(2),
                    4096, Duration.ofSeconds(1), false, true);
        }

        public Options withKeyPrefix(String prefix) {
            return new Options(redisUrl, prefix, chunkTokens, tagDepth, maxViewAge, timeout, connectTimeout, maxBlocks,
                    snapshotInterval, clientSide, countsOwnPicks);
        }

        public Options withMaxViewAge(Duration age) {
            return new Options(redisUrl, keyPrefix, chunkTokens, tagDepth, age, timeout, connectTimeout, maxBlocks,
                    snapshotInterval, clientSide, countsOwnPicks);
        }

        /** Client-side picking, with the snapshot refreshed every 100 ms. */
        public Options withClientSidePick() {
            return new Options(redisUrl, keyPrefix, chunkTokens, tagDepth, maxViewAge, timeout, connectTimeout, maxBlocks,
                    Duration.ofMillis(100), true, countsOwnPicks);
        }

        /**
         * A client that asks without sending requests (a dashboard, a dry run, a test waiting for the
         * view): its answers are not counted as load, so asking often does not move the next answer.
         */
        public Options observing() {
            return new Options(redisUrl, keyPrefix, chunkTokens, tagDepth, maxViewAge, timeout, connectTimeout, maxBlocks,
                    snapshotInterval, clientSide, false);
        }
    }

    /** What the client keeps of the view between refreshes (client-side picking reads meta from here). */
    private record Snapshot(String updatedMs, double busyFactor, double floor, Map<String, String> classes, double clientCap,
                            int clientMinInflight, PickPolicy.Cost cost) {}

    private final Options options;
    private final ViewLayout layout;
    private final CanonicalBlockHasher hasher;
    private final ViewConnection connection;
    private final RedisClusterCommands<String, String> redis;
    /** Picking client-side: asked for, or needed because on Redis Cluster one pick's keys span slots. */
    private final boolean clientSide;
    /** Last engine table read, for load-only routing while Redis is unreachable. */
    private volatile Map<String, String> lastEngines = Map.of();
    private final java.util.concurrent.ScheduledExecutorService snapshots;
    private volatile Snapshot meta;
    /** Orders the background refresh against one asked for, so the later read is the one kept. */
    private final Object refreshLock = new Object();
    /** A root block's holders as read, and when (System.nanoTime). */
    private record RootRead(String value, long readAtNanos) {}

    /** Root blocks read client-side, fresh for one snapshot interval: a hot root is read once per interval. */
    private final Map<String, RootRead> roots = new java.util.LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, RootRead> eldest) {
            return size() > 4096;
        }
    };

    /** How many of its own picks, and how far back, the client counts as load not yet reported. */
    static final int RECENT_PICKS = 128;
    static final long RECENT_PICKS_MS = 5_000;

    /** This client's picks, oldest first; bounded by {@link #RECENT_PICKS} and {@link #RECENT_PICKS_MS}. */
    private final java.util.ArrayDeque<PickPolicy.RecentPick> recentPicks = new java.util.ArrayDeque<>();

    public KvRouterClient(Options options) {
        this.options = options;
        this.layout = new ViewLayout(options.keyPrefix());
        this.hasher = new CanonicalBlockHasher(options.chunkTokens());
        this.connection = ViewConnection.open(options.redisUrl(), options.timeout(), options.connectTimeout(), 1024);
        this.redis = connection.sync();
        this.clientSide = options.clientSide() || connection.cluster();
        this.snapshots = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "kvr-engine-snapshot");
            t.setDaemon(true);
            return t;
        });
        long every = options.snapshotInterval().toMillis();
        snapshots.scheduleWithFixedDelay(this::refreshQuietly, 0, every, java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    private void refreshQuietly() {
        try {
            refresh();
        } catch (RuntimeException e) {
            // Redis unreachable: keep the last copy, which is what the fallback is for.
        }
    }

    /**
     * Reads the engine table (and, picking client-side, the view's meta, forgetting the cached roots)
     * now; the background thread does it every interval.
     */
    public void refresh() {
        // One refresh at a time: a background read sent before a write must not land after a newer one.
        synchronized (refreshLock) {
            refreshLocked();
        }
    }

    private void refreshLocked() {
        engines();
        if (clientSide) {
            synchronized (roots) {
                roots.clear();
            }
            List<io.lettuce.core.KeyValue<String, String>> m = redis.hmget(layout.metaKey(), "updated_ms", "busy_factor",
                    "confidence_floor", "client_cap", "client_min_inflight", "chunk_tokens", "kv_bytes_per_token",
                    "prefill_tokens_per_s", "fabric_bytes_per_s", "usd_per_million_input", "uncached_prefill_weight");
            PickPolicy.Cost cost = new PickPolicy.Cost(Integer.parseInt(m.get(5).getValueOrElse("16")), number(m.get(6)),
                    number(m.get(7)), number(m.get(8)), Double.parseDouble(m.get(9).getValueOrElse("0")),
                    Double.parseDouble(m.get(10).getValueOrElse("3")));
            meta = new Snapshot(m.get(0).getValueOrElse(null), Double.parseDouble(m.get(1).getValueOrElse("2")),
                    Double.parseDouble(m.get(2).getValueOrElse("0.05")), redis.hgetall(layout.classesKey()),
                    Double.parseDouble(m.get(3).getValueOrElse("1")), Integer.parseInt(m.get(4).getValueOrElse("1000000000")), cost);
        }
    }

    private static Double number(io.lettuce.core.KeyValue<String, String> kv) {
        return kv.hasValue() ? Double.valueOf(kv.getValue()) : null;
    }

    /** Picks an engine for a prompt given as token ids. */
    public Pick pick(String model, String loraName, int[] tokens, List<String> extraKeys) {
        return pick(hasher.chain(model, loraName, tokens, extraKeys), null);
    }

    /** Picks an engine for a prompt of a prefix class (tenant, app, template; null for none), given as token ids. */
    public Pick pick(String model, String loraName, int[] tokens, List<String> extraKeys, String prefixClass) {
        return pick(hasher.chain(model, loraName, tokens, extraKeys), prefixClass);
    }

    /** Picks an engine for a prompt given as its canonical block hashes, first to last. */
    public Pick pick(long[] chain) {
        return pick(chain, null);
    }

    /** Picks for a prompt of a prefix class; a class whose affinity the job turned off is placed on load alone. */
    public Pick pick(long[] chain, String prefixClass) {
        return pick(chain, prefixClass, null);
    }

    /**
     * Picks for a prompt of a prefix class (null for none) from a client (API key, user, tenant; null
     * for none): a class whose affinity the job turned off is placed on load alone, and no engine gets
     * more than the client cap of one client's requests in flight.
     */
    public Pick pick(long[] chain, String prefixClass, String clientId) {
        int n = Math.min(chain.length, options.maxBlocks());
        Pick pick = clientSide ? pickClientSide(chain, n, prefixClass, clientId) : pickInRedis(chain, n, prefixClass, clientId);
        remember(pick, n);
        return pick;
    }

    private Pick pickInRedis(long[] chain, int n, String prefixClass, String clientId) {
        String[] keys = {layout.metaKey(), layout.enginesKey(),
                layout.groupKey(n > 0 ? ViewLayout.tag(chain, 1, options.tagDepth()) : 0),
                layout.groupKey(n > 1 ? ViewLayout.tag(chain, 2, options.tagDepth()) : 0),
                layout.classesKey(), layout.clientsKey()};
        String[] args = new String[n + 5];
        args[0] = Long.toString(options.maxViewAge().toMillis());
        args[1] = prefixClass == null ? "" : prefixClass;
        args[2] = clientId == null ? "" : clientId;
        args[3] = Integer.toString(n);
        for (int i = 0; i < n; i++) {
            args[i + 4] = ViewLayout.hex(chain[i]);
        }
        args[n + 4] = recentPicksArgument();
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
        PickPolicy.Saving saving = new PickPolicy.Saving((String) answer.get(5), ((Long) answer.get(6)).intValue(),
                Double.parseDouble((String) answer.get(7)), Double.parseDouble((String) answer.get(8)));
        // A library older than layout 5 (loaded by an older job) answers without the decode pool's part.
        PickPolicy.Handoff handoff = answer.size() < 11 || ((String) answer.get(9)).isEmpty() ? PickPolicy.Handoff.NONE
                : new PickPolicy.Handoff((String) answer.get(9), Double.parseDouble((String) answer.get(10)));
        return new Pick(engine, ((Long) answer.get(1)).intValue(), reason, age, Double.parseDouble((String) answer.get(4)), source,
                saving, handoff);
    }

    /** Two reads (the root from its cache when fresh) and {@link PickPolicy}: the same answer as kvr_pick. */
    private Pick pickClientSide(long[] chain, int n, String prefixClass, String clientId) {
        try {
            if (meta == null) {
                refresh();
            }
            Snapshot view = meta;
            if (view.updatedMs() == null) {
                return leastLoaded(Source.FALLBACK_STALE_VIEW);
            }
            List<String> blocks = new ArrayList<>(n);
            if (n > 0) {
                blocks.add(root(chain));
            }
            if (n > 1) {
                String[] fields = new String[n - 1];
                for (int i = 1; i < n; i++) {
                    fields[i - 1] = ViewLayout.hex(chain[i]);
                }
                redis.hmget(layout.groupKey(ViewLayout.tag(chain, 2, options.tagDepth())), fields)
                        .forEach(kv -> blocks.add(kv.getValueOrElse(null)));
            }
            List<PickPolicy.RecentPick> mine = recentPicks();
            Map<String, EngineEntry> engines = withRecentPicks(lastEngines, mine);
            boolean classOff = prefixClass != null && "off".equals(view.classes().get(prefixClass));
            // In flight changes with every request: read per pick, not from the snapshot.
            Map<String, Integer> inflight = clientId == null ? null : PickPolicy.inflight(redis.hget(layout.clientsKey(), clientId));
            long now = System.currentTimeMillis();
            Double rate = view.cost().prefillTokensPerS();
            Map<String, Double> backlog = rate == null ? Map.of() : PickPolicy.prefillBacklog(mine, rate, now);
            PickPolicy.Choice c = PickPolicy.choose(new PickPolicy.ViewRead(Long.parseLong(view.updatedMs()), view.busyFactor(),
                    view.floor(), engines, blocks, classOff, inflight, view.clientCap(), view.clientMinInflight(), view.cost(), backlog),
                    now, options.maxViewAge().toMillis());
            Source source = "FALLBACK_LOAD_ONLY".equals(c.reason()) ? Source.FALLBACK_STALE_VIEW
                    : c.engineId().isEmpty() ? Source.NO_ENGINE : Source.VIEW;
            return new Pick(c.engineId(), c.matchedBlocks(), c.reason(), c.viewAgeMs(), c.confidence(), source, c.saving(),
                    c.handoff());
        } catch (RedisException e) {
            return leastLoaded(Source.FALLBACK_REDIS_DOWN);
        }
    }

    private String root(long[] chain) {
        String field = ViewLayout.hex(chain[0]);
        long now = System.nanoTime();
        synchronized (roots) {
            RootRead read = roots.get(field);
            if (read != null && now - read.readAtNanos() < options.snapshotInterval().toNanos()) {
                return read.value();
            }
        }
        String value = redis.hget(layout.groupKey(ViewLayout.tag(chain, 1, options.tagDepth())), field);
        synchronized (roots) {
            roots.put(field, new RootRead(value, now));
        }
        return value;
    }

    /** The engine table as the view publishes it (also refreshes the fallback's copy). */
    public Map<String, EngineEntry> engines() {
        Map<String, String> raw;
        synchronized (refreshLock) { // read and store as one step, so the copy kept is never older than one read
            raw = redis.hgetall(layout.enginesKey());
            lastEngines = raw;
        }
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
        List<Map.Entry<String, EngineEntry>> live = new ArrayList<>(withRecentPicks(lastEngines, recentPicks()).entrySet());
        Comparator<Map.Entry<String, EngineEntry>> byLoad =
                Comparator.<Map.Entry<String, EngineEntry>>comparingInt(e -> e.getValue().load()).thenComparing(Map.Entry::getKey);
        // Under disaggregated serving the decode pool is named too; the hand-off is not priced here.
        PickPolicy.Handoff handoff = live.stream().filter(e -> e.getValue().decodeOnly() && !"DRAINING".equals(e.getValue().status()))
                .min(byLoad).map(e -> new PickPolicy.Handoff(e.getKey(), 0)).orElse(PickPolicy.Handoff.NONE);
        return live.stream()
                .filter(e -> !"DRAINING".equals(e.getValue().status()) && !e.getValue().decodeOnly())
                .min(byLoad)
                .map(e -> new Pick(e.getKey(), 0, "FALLBACK_LOAD_ONLY", -1, 0, answered, PickPolicy.Saving.NONE, handoff))
                .orElse(new Pick("", 0, "NO_VIEW", -1, 0, Source.NO_ENGINE, PickPolicy.Saving.NONE));
    }

    /** Remembers a placement and the prompt tokens it sends there uncached ({@code n} blocks looked up). */
    private void remember(Pick pick, int n) {
        if (!options.countsOwnPicks() || pick.engineId() == null || pick.engineId().isEmpty()) {
            return;
        }
        int uncached = Math.max(0, n - Math.max(0, pick.matchedBlocks())) * options.chunkTokens();
        synchronized (recentPicks) {
            recentPicks.addLast(new PickPolicy.RecentPick(pick.engineId(), System.currentTimeMillis(), uncached));
            if (recentPicks.size() > RECENT_PICKS) {
                recentPicks.removeFirst();
            }
        }
    }

    /** The recent picks still within {@link #RECENT_PICKS_MS}, oldest first (older ones are dropped). */
    private List<PickPolicy.RecentPick> recentPicks() {
        long since = System.currentTimeMillis() - RECENT_PICKS_MS;
        synchronized (recentPicks) {
            while (!recentPicks.isEmpty() && recentPicks.peekFirst().atMs() < since) {
                recentPicks.removeFirst();
            }
            return new ArrayList<>(recentPicks);
        }
    }

    /** kvr_pick's last argument: {@code engine@epoch_ms:uncached_tokens,…}, oldest first. */
    private String recentPicksArgument() {
        StringBuilder arg = new StringBuilder();
        for (PickPolicy.RecentPick p : recentPicks()) {
            if (arg.length() > 0) {
                arg.append(',');
            }
            arg.append(p.engineId()).append('@').append(p.atMs()).append(':').append(p.prefillTokens());
        }
        return arg.toString();
    }

    /** The engine table as read, each engine's load plus this client's picks made after that load was measured (as kvr_pick counts). */
    private Map<String, EngineEntry> withRecentPicks(Map<String, String> raw, List<PickPolicy.RecentPick> mine) {
        Map<String, EngineEntry> engines = new java.util.HashMap<>();
        raw.forEach((id, v) -> engines.put(id, EngineEntry.decode(v)));
        for (PickPolicy.RecentPick p : mine) {
            EngineEntry e = engines.get(p.engineId());
            if (e != null && p.atMs() > e.loadAtMs()) {
                engines.put(p.engineId(), e.plusWaiting(1));
            }
        }
        return engines;
    }

    @Override
    public void close() {
        snapshots.shutdownNow();
        connection.close();
    }
}
