package dev.kvrouter.balancer;

import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.contract.RedisSecurity;
import dev.kvrouter.contract.ViewConnection;
import dev.kvrouter.contract.ViewContract.Answer;
import dev.kvrouter.contract.ViewContract.EngineStatus;
import dev.kvrouter.contract.ViewContract.Reason;
import dev.kvrouter.contract.ViewLayout;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
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
 * <p>Each pick is also a reservation in Redis, made atomically with the decision: every balancer's
 * next pick counts it as load on its engine until the engine's load report covers it, and as the
 * client's request in flight (the client cap) until {@link #done(String)} releases it or it
 * expires. The client keeps no ledger of its own: all it shares with other balancers is in Redis.
 */
public final class KvRouterClient implements AutoCloseable {

    /** The reason of a pick told to hold its request ({@link Pick#held()}). */
    public static final String HOLD = Reason.HOLD.name();

    /** Where an answer came from. */
    public enum Source {
        /** The view's answer. */
        VIEW,
        /** The view too old or missing: least loaded by the last engine table read. */
        FALLBACK_STALE_VIEW,
        /** Redis did not answer: least loaded by the last engine table read. */
        FALLBACK_REDIS_DOWN,
        /**
         * The view is fresh but names no engine that can take the prompt (its table empty: the job just started,
         * Redis restarted, every engine dead): the configured {@link Options#fallbackEngines()} by this client's
         * own requests in flight.
         */
        FALLBACK_NO_ENGINES,
        /** No engine known at all: none in the view or its last copy, none configured, or every one avoided. */
        NO_ENGINE
    }

    /**
     * @param engineId         the engine to send the request to; empty when no engine is known at all
     * @param matchedBlocks    canonical blocks of the prompt the engine is expected to hold
     * @param reason           one of the view's reasons ({@link dev.kvrouter.contract.ViewContract.Reason}); HOLD:
     *                         {@link #held()}
     * @param viewAgeMs        age of the view at the pick; -1 when there was none
     * @param confidence       confidence that the matched blocks are still there, 0..1
     * @param saving           the cost view: expected outcome, what it saves and the wait it adds
     * @param handoff          disaggregated serving: the decode engine and the hand-off's milliseconds; NONE without a DECODE pool
     * @param bestHolderBlocks blocks of the prompt the best holder matches, whichever engine was chosen: what affinity
     *                         would match (also for a class whose affinity is off; 0 without a fresh view)
     * @param requestId        what to pass to {@link #done(String)} when the request ends: the reservation this pick made,
     *                         or the request counted on a fallback engine ({@link Source#FALLBACK_NO_ENGINES}); null
     *                         when nothing was recorded
     */
    public record Pick(String engineId, int matchedBlocks, String reason, long viewAgeMs, double confidence, Source source,
                       PickPolicy.Saving saving, PickPolicy.Handoff handoff, int bestHolderBlocks, String requestId) {

        /** A pick in a unified fleet (no decode pool), without a reservation. */
        public Pick(String engineId, int matchedBlocks, String reason, long viewAgeMs, double confidence, Source source,
                    PickPolicy.Saving saving) {
            this(engineId, matchedBlocks, reason, viewAgeMs, confidence, source, saving, PickPolicy.Handoff.NONE, matchedBlocks, null);
        }

        /**
         * Every engine is full and the balancer offered to hold ({@link Options#hold()}): no engine, no
         * reservation; keep the request and pick again under the same request id.
         */
        public boolean held() {
            return HOLD.equals(reason);
        }
    }

    /**
     * @param maxViewAge       older than this, the view is not trusted: least-loaded routing instead
     * @param timeout          per Redis command; a balancer cannot wait long
     * @param connectTimeout   for connecting and the connection handshake (the first one warms up the JVM too)
     * @param maxBlocks        longest prompt prefix looked up, in canonical blocks
     * @param snapshotInterval how often the engine table (and, picking client-side, the confidence floor) is
     *                         copied in the background
     * @param clientSide       match the prompt in this client from plain reads of the groups (roots cached for one
     *                         snapshot interval) and place it with {@code kvr_place}: for Redis Cluster, where the
     *                         groups sit in other slots than the engine table
     * @param reserves         each pick records a reservation ({@code kvr_pick}); false for a client that only looks
     *                         ({@link #observing()}: {@code kvr_peek}, read-only)
     * @param meters           where the client's metrics go (picks by reason, pick latency, fallbacks): the
     *                         balancer's own registry; by default Micrometer's global one, which records
     *                         nothing until the application adds a registry to it
     * @param security         credentials and TLS for Redis ({@link RedisSecurity#fromConfig}: the client config's
     *                         {@code redis.*} keys); none by default
     * @param hold             how long the balancer will hold a request while every engine's slots are taken
     *                         (zero, the default: never). Above zero a pick with a request id may answer
     *                         {@link Pick#held()}: the balancer keeps the request and asks again under the same id
     *                         when one of its requests ends or after a short pause, keeping the places of the others
     *                         it holds with {@link #holding} (a request neither asked for nor kept for a second
     *                         loses its place), and the request takes the first slot
     *                         freed anywhere in the fleet, in the order the requests came; once it has waited
     *                         this long it is placed as if it had not waited.
     * @param fallbackEngines  the engines this balancer sends to when neither the view nor its last copy names one
     *                         (the engine table empty, or Redis gone before it was ever read): chosen by this client's
     *                         own requests in flight, ended by {@link #done(String)}, like nginx's {@code least_conn};
     *                         none by default (the pick then answers {@link Source#NO_ENGINE})
     * @param balancerId       the scope of this balancer's request ids in Redis: its reservations and places in the
     *                         waiting room are kept under {@code <balancerId>/<request id>}, so that two balancers using
     *                         the same request id (an upstream's X-Request-Id, a counter) never take over or release
     *                         each other's; empty (the default): a random scope for each client created
     */
    public record Options(String redisUrl, String keyPrefix, int chunkTokens, int tagDepth, Duration maxViewAge,
                          Duration timeout, Duration connectTimeout, int maxBlocks, Duration snapshotInterval,
                          boolean clientSide, boolean reserves, MeterRegistry meters, RedisSecurity security, Duration hold,
                          List<String> fallbackEngines, String balancerId) {
        public static final Duration DEFAULT_MAX_VIEW_AGE = Duration.ofSeconds(2);
        public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(100);
        public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(2);
        public static final int DEFAULT_MAX_BLOCKS = 4096;
        public static final Duration DEFAULT_SNAPSHOT_INTERVAL = Duration.ofSeconds(1);
        /** Picking client-side, the snapshot is refreshed this often (the match reads it for every pick). */
        public static final Duration CLIENT_SIDE_SNAPSHOT_INTERVAL = Duration.ofMillis(100);

        public static Options defaults(String redisUrl) {
            return new Options(redisUrl, ViewLayout.DEFAULT_KEY_PREFIX, ViewLayout.DEFAULT_CHUNK_TOKENS, ViewLayout.DEFAULT_TAG_DEPTH,
                    DEFAULT_MAX_VIEW_AGE, DEFAULT_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_BLOCKS, DEFAULT_SNAPSHOT_INTERVAL, false, true,
                    Metrics.globalRegistry, RedisSecurity.none(), Duration.ZERO, List.of(), "");
        }

        public Options {
            fallbackEngines = List.copyOf(fallbackEngines);
            if (balancerId.length() > 64 || balancerId.contains("/")) {
                throw new IllegalArgumentException("balancerId must be at most 64 characters without '/', was '" + balancerId + "'");
            }
        }

        /** The defaults for this Redis, to change field by field. */
        public static Builder builder(String redisUrl) {
            return new Builder(defaults(redisUrl));
        }

        /** These options, to change field by field. */
        public Builder toBuilder() {
            return new Builder(this);
        }

        public Options withKeyPrefix(String prefix) {
            return toBuilder().keyPrefix(prefix).build();
        }

        public Options withMaxViewAge(Duration age) {
            return toBuilder().maxViewAge(age).build();
        }

        /** Client-side matching, with the snapshot refreshed every 100 ms. */
        public Options withClientSidePick() {
            return toBuilder().clientSide(true).snapshotInterval(CLIENT_SIDE_SNAPSHOT_INTERVAL).build();
        }

        /**
         * A client that asks without sending requests (a dashboard, a dry run, a test waiting for the
         * view): its answers reserve nothing, so asking often moves no answer, its own or another balancer's.
         */
        public Options observing() {
            return toBuilder().reserves(false).build();
        }

        /** The client's metrics into this registry (a Prometheus one, say) instead of Micrometer's global one. */
        public Options withMeters(MeterRegistry registry) {
            return toBuilder().meters(registry).build();
        }

        /** Redis credentials and TLS. */
        public Options withSecurity(RedisSecurity security) {
            return toBuilder().security(security).build();
        }

        /** Requests held up to {@code hold} while every engine is full ({@link Pick#held()}). */
        public Options holding(Duration hold) {
            return toBuilder().hold(hold).build();
        }

        /** A mutable copy of the options; {@link #build()} makes them again. */
        public static final class Builder {
            private String redisUrl;
            private String keyPrefix;
            private int chunkTokens;
            private int tagDepth;
            private Duration maxViewAge;
            private Duration timeout;
            private Duration connectTimeout;
            private int maxBlocks;
            private Duration snapshotInterval;
            private boolean clientSide;
            private boolean reserves;
            private MeterRegistry meters;
            private RedisSecurity security;
            private Duration hold;
            private List<String> fallbackEngines;
            private String balancerId;

            private Builder(Options o) {
                redisUrl = o.redisUrl;
                keyPrefix = o.keyPrefix;
                chunkTokens = o.chunkTokens;
                tagDepth = o.tagDepth;
                maxViewAge = o.maxViewAge;
                timeout = o.timeout;
                connectTimeout = o.connectTimeout;
                maxBlocks = o.maxBlocks;
                snapshotInterval = o.snapshotInterval;
                clientSide = o.clientSide;
                reserves = o.reserves;
                meters = o.meters;
                security = o.security;
                hold = o.hold;
                fallbackEngines = o.fallbackEngines;
                balancerId = o.balancerId;
            }

            public Builder keyPrefix(String v) { keyPrefix = v; return this; }
            public Builder chunkTokens(int v) { chunkTokens = v; return this; }
            public Builder tagDepth(int v) { tagDepth = v; return this; }
            public Builder maxViewAge(Duration v) { maxViewAge = v; return this; }
            public Builder timeout(Duration v) { timeout = v; return this; }
            public Builder connectTimeout(Duration v) { connectTimeout = v; return this; }
            public Builder maxBlocks(int v) { maxBlocks = v; return this; }
            public Builder snapshotInterval(Duration v) { snapshotInterval = v; return this; }
            public Builder clientSide(boolean v) { clientSide = v; return this; }
            public Builder reserves(boolean v) { reserves = v; return this; }
            public Builder meters(MeterRegistry v) { meters = v; return this; }
            public Builder security(RedisSecurity v) { security = v; return this; }
            public Builder hold(Duration v) { hold = v; return this; }
            public Builder fallbackEngines(List<String> v) { fallbackEngines = v; return this; }
            public Builder balancerId(String v) { balancerId = v; return this; }

            public Options build() {
                return new Options(redisUrl, keyPrefix, chunkTokens, tagDepth, maxViewAge, timeout, connectTimeout, maxBlocks,
                        snapshotInterval, clientSide, reserves, meters, security, hold, fallbackEngines, balancerId);
            }
        }
    }

    private final Options options;
    private final ClientMetrics metrics;
    private final ViewLayout layout;
    private final CanonicalBlockHasher hasher;
    private final ViewConnection connection;
    private final RedisClusterCommands<String, String> redis;
    /** Matching client-side: asked for, or needed because on Redis Cluster the groups span slots. */
    private final boolean clientSide;
    /** The scope of this client's request ids in Redis: the balancer id given, or a random one. */
    private final String scope;
    /** Last engine table read, for the client-side match and for load-only routing while Redis is unreachable. */
    private volatile Map<String, String> lastEngines = Map.of();
    /** The view's confidence floor as last read (client-side matching); null before the first read. */
    private volatile Double floor;
    private final java.util.concurrent.ScheduledExecutorService snapshots;
    /** Orders the background refresh against one asked for, so the later read is the one kept. */
    private final Object refreshLock = new Object();
    /** This client's requests per configured fallback engine, for when no engine is known otherwise. */
    private final OwnLeastConnections ownCounts = new OwnLeastConnections(OWN_COUNT_CAP);
    /** Requests counted on the fallback engines at most: past it, the oldest never reported done are forgotten. */
    static final int OWN_COUNT_CAP = 65_536;
    /** A root block's holders as read, and when (System.nanoTime). */
    private record RootRead(String value, long readAtNanos) {}

    /** Root blocks read client-side, fresh for one snapshot interval: a hot root is read once per interval. */
    private final Map<String, RootRead> roots = new java.util.LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, RootRead> eldest) {
            return size() > 4096;
        }
    };

    public KvRouterClient(Options options) {
        this.options = options;
        this.metrics = new ClientMetrics(options.meters());
        this.layout = new ViewLayout(options.keyPrefix());
        this.hasher = new CanonicalBlockHasher(options.chunkTokens());
        this.connection = ViewConnection.open(options.redisUrl(), options.security(), options.timeout(), options.connectTimeout(), 1024);
        this.redis = connection.sync();
        this.clientSide = options.clientSide() || connection.cluster();
        this.scope = options.balancerId().isEmpty() ? java.util.HexFormat.of().toHexDigits(new java.security.SecureRandom().nextLong())
                : options.balancerId();
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
     * Reads the engine table (and, matching client-side, the confidence floor, forgetting the cached
     * roots) now; the background thread does it every interval.
     */
    public void refresh() {
        // One refresh at a time: a background read sent before a write must not land after a newer one.
        synchronized (refreshLock) {
            engines();
            if (clientSide) {
                synchronized (roots) {
                    roots.clear();
                }
                floor = Double.valueOf(java.util.Objects.requireNonNullElse(redis.hget(layout.metaKey(), "confidence_floor"),
                        Double.toString(ViewLayout.DEFAULT_CONFIDENCE_FLOOR)));
            }
        }
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

    /** Picks for a prompt of a prefix class; a class an operator turned off is placed on load alone. */
    public Pick pick(long[] chain, String prefixClass) {
        return pick(chain, prefixClass, null);
    }

    /**
     * Picks for a prompt of a prefix class (null for none) from a client (API key, user, tenant; null
     * for none), under a new request id (the answer's {@link Pick#requestId()}).
     */
    public Pick pick(long[] chain, String prefixClass, String clientId) {
        return pick(chain, prefixClass, clientId, options.reserves() ? java.util.UUID.randomUUID().toString() : null);
    }

    /**
     * Picks for a prompt of a prefix class (null for none) from a client (null for none), reserving
     * under {@code requestId} (null: no reservation): a class an operator turned off is
     * placed on load alone, and no engine gets more than the client cap of one client's live
     * reservations. Call {@link #done(String)} with the id when the request ends.
     */
    public Pick pick(long[] chain, String prefixClass, String clientId, String requestId) {
        return pick(chain, prefixClass, clientId, requestId, java.util.Set.of());
    }

    /**
     * Picks again after the balancer could not reach the engines in {@code avoid} (connection
     * refused, reset): they are left out as if dead, for this pick only — the view learns of a dead
     * engine only once it has been silent for {@code engine.suspect-after}, and until then every
     * pick's best answer may be that engine. Under the same request id the reservation moves to the
     * new engine.
     */
    public Pick pick(long[] chain, String prefixClass, String clientId, String requestId, java.util.Set<String> avoid) {
        long started = System.nanoTime();
        int n = Math.min(chain.length, options.maxBlocks());
        String reservation = options.reserves() ? requestId : null;
        Pick pick = clientSide ? pickClientSide(chain, n, prefixClass, clientId, reservation, avoid)
                : pickInRedis(chain, n, prefixClass, clientId, reservation, avoid);
        metrics.picked(pick, System.nanoTime() - started);
        return pick;
    }

    /**
     * Warms the pick path up before the balancer takes traffic, as a readiness step: {@code picks}
     * picks of a made-up prompt of 64 blocks that reserve nothing, so the JIT has compiled the path
     * and the connection has answered before a real request waits on them (a cold JVM's first picks
     * can take longer than the command timeout and fall back to load only). Returns how many
     * answered from the view; 0 means the view is not there yet.
     */
    public int warmUp(int picks) {
        long[] prompt = new java.util.Random(picks).longs(64).toArray();
        int fromView = 0;
        for (int i = 0; i < picks; i++) {
            if (pick(prompt, null, null, null).source() == Source.VIEW) { // no request id: no reservation
                fromView++;
            }
        }
        return fromView;
    }

    /**
     * The request is done (finished, failed, or never sent): its reservation leaves, so it no longer
     * counts against its client's cap, and until its engine reports its load again every balancer
     * counts one request less there. Returns false when there was none (already released or
     * expired) or Redis did not answer; the reservation then expires on its own.
     */
    public boolean done(String requestId) {
        if (requestId == null) {
            return false;
        }
        ownCounts.ended(requestId);
        try {
            Long released = redis.fcall(ViewLayout.DONE_FUNCTION, ScriptOutputType.INTEGER,
                    layout.functionKeys(), reservationId(requestId));
            return released != null && released > 0;
        } catch (RedisException e) {
            return false;
        }
    }

    /**
     * The balancer still holds these requests ({@link Pick#held()}): they keep their places in the
     * waiting room though it asked again only for its oldest (the rest would be told to hold too).
     * Call it for every held request at least every few hundred milliseconds: a request neither
     * picked nor kept for a second loses its place. Returns how many still had one; 0 when Redis did
     * not answer.
     */
    public int holding(java.util.Collection<String> requestIds) {
        if (requestIds.isEmpty()) {
            return 0;
        }
        try {
            Long kept = redis.fcall(ViewLayout.HOLDING_FUNCTION, ScriptOutputType.INTEGER, layout.functionKeys(),
                    requestIds.stream().map(this::reservationId).toArray(String[]::new));
            return kept == null ? 0 : kept.intValue();
        } catch (RedisException e) {
            return 0;
        }
    }

    private Pick pickInRedis(long[] chain, int n, String prefixClass, String clientId, String requestId, java.util.Set<String> avoid) {
        String[] keys = layout.functionKeys(); // the library reads the prompt's groups by their hashes
        String[] args = new String[6 + tailArguments(requestId, avoid)];
        args[0] = Long.toString(options.maxViewAge().toMillis());
        args[1] = prefixClass == null ? "" : prefixClass;
        args[2] = clientId == null ? "" : clientId;
        args[3] = requestId == null || requestId.isEmpty() ? "" : reservationId(requestId);
        args[4] = Integer.toString(n);
        args[5] = ViewLayout.packedHex(chain, n);
        tail(args, 6, requestId, avoid);
        try {
            List<Object> answer = options.reserves()
                    ? redis.fcall(ViewLayout.PICK_FUNCTION, ScriptOutputType.MULTI, keys, args)
                    : redis.fcallReadOnly(ViewLayout.PEEK_FUNCTION, ScriptOutputType.MULTI, keys, args);
            return answer(answer, requestId, avoid);
        } catch (RedisException e) {
            return leastLoaded(Source.FALLBACK_REDIS_DOWN, requestId, avoid);
        }
    }

    /**
     * Redis Cluster: the prompt's groups are read here (the root from its cache when fresh, the rest
     * in one HMGET on its slot) and matched as kvr_pick would; {@code kvr_place} then decides and
     * reserves in the head slot. Two round trips, each on one primary.
     */
    private Pick pickClientSide(long[] chain, int n, String prefixClass, String clientId, String requestId, java.util.Set<String> avoid) {
        try {
            if (floor == null) {
                refresh();
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
            Map<String, EngineEntry> engines = new java.util.HashMap<>();
            lastEngines.forEach((id, v) -> engines.put(id, EngineEntry.decode(v)));
            Map<String, PickPolicy.Run> runs = PickPolicy.match(engines, blocks, System.currentTimeMillis(), floor);
            String[] keys = layout.functionKeys();
            int[] sampled = ViewLayout.pendingPositions(n);
            String[] args = new String[6 + sampled.length + tailArguments(requestId, avoid)];
            args[0] = Long.toString(options.maxViewAge().toMillis());
            args[1] = prefixClass == null ? "" : prefixClass;
            args[2] = clientId == null ? "" : clientId;
            args[3] = requestId == null || requestId.isEmpty() ? "" : reservationId(requestId);
            args[4] = Integer.toString(n);
            args[5] = PickPolicy.runsArgument(runs);
            for (int i = 0; i < sampled.length; i++) { // the pending prefixes are matched and recorded in the head slot
                args[6 + i] = ViewLayout.hex(chain[sampled[i] - 1]);
            }
            tail(args, 6 + sampled.length, requestId, avoid);
            return answer(redis.fcall(ViewLayout.PLACE_FUNCTION, ScriptOutputType.MULTI, keys, args), requestId, avoid);
        } catch (RedisException e) {
            return leastLoaded(Source.FALLBACK_REDIS_DOWN, requestId, avoid);
        }
    }

    /**
     * The field this client's request is reserved under in Redis (and holds its place in the waiting
     * room): the request id in this balancer's scope, {@code <balancerId>/<requestId>}.
     */
    public String reservationId(String requestId) {
        return scope + "/" + requestId;
    }

    /** Whether this pick offers to hold its request: holding on, reserving, under a request id. */
    private boolean offersHold(String requestId) {
        return requestId != null && options.reserves() && options.hold() != null && options.hold().toMillis() > 0;
    }

    /** How many optional arguments follow the pick's fixed ones: the engines to avoid, then hold_ms. */
    private int tailArguments(String requestId, java.util.Set<String> avoid) {
        return offersHold(requestId) ? 2 : avoid.isEmpty() ? 0 : 1;
    }

    private void tail(String[] args, int at, String requestId, java.util.Set<String> avoid) {
        if (tailArguments(requestId, avoid) > 0) {
            args[at] = String.join(",", avoid);
        }
        if (offersHold(requestId)) {
            args[at + 1] = Long.toString(options.hold().toMillis());
        }
    }

    /** A Pick from kvr_pick's (or kvr_place's, or kvr_peek's) answer (its fields: ViewContract.Answer). */
    private Pick answer(List<Object> answer, String requestId, java.util.Set<String> avoid) {
        String engine = (String) answer.get(Answer.ENGINE);
        String reason = (String) answer.get(Answer.REASON);
        long age = (Long) answer.get(Answer.VIEW_AGE_MS);
        if (Reason.NO_VIEW.name().equals(reason)) {
            return leastLoaded(Source.FALLBACK_STALE_VIEW, requestId, avoid);
        }
        if (engine.isEmpty() && !HOLD.equals(reason)) {
            return fallbackEngine(Source.FALLBACK_NO_ENGINES, requestId, avoid);
        }
        Source source = Reason.FALLBACK_LOAD_ONLY.name().equals(reason) ? Source.FALLBACK_STALE_VIEW : Source.VIEW;
        // The added wait came with the answer's 13th field; a library loaded by an older job has none.
        PickPolicy.Saving saving = new PickPolicy.Saving((String) answer.get(Answer.OUTCOME), ((Long) answer.get(Answer.SAVED_TOKENS)).intValue(),
                Double.parseDouble((String) answer.get(Answer.SAVED_USD)), Double.parseDouble((String) answer.get(Answer.SAVED_PREFILL_MS)),
                answer.size() > Answer.ADDED_WAIT_MS ? Double.parseDouble((String) answer.get(Answer.ADDED_WAIT_MS)) : 0);
        String decode = (String) answer.get(Answer.DECODE_ENGINE);
        PickPolicy.Handoff handoff = decode.isEmpty() ? PickPolicy.Handoff.NONE
                : new PickPolicy.Handoff(decode, Double.parseDouble((String) answer.get(Answer.HANDOFF_MS)));
        return new Pick(engine, ((Long) answer.get(Answer.MATCHED_BLOCKS)).intValue(), reason, age,
                Double.parseDouble((String) answer.get(Answer.CONFIDENCE)), source, saving, handoff,
                ((Long) answer.get(Answer.BEST_MATCH)).intValue(), engine.isEmpty() ? null : requestId);
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

    /**
     * Load-only routing from the last engine table read, when the view cannot answer; no reservation
     * is made. {@code avoid}: engines left out.
     */
    private Pick leastLoaded(Source wanted, String requestId, java.util.Set<String> avoid) {
        Source source = wanted;
        if (source != Source.FALLBACK_REDIS_DOWN) {
            try {
                engines();
            } catch (RedisException e) {
                source = Source.FALLBACK_REDIS_DOWN;
            }
        }
        Source answered = source;
        List<Map.Entry<String, EngineEntry>> live = new ArrayList<>();
        lastEngines.forEach((id, v) -> live.add(Map.entry(id, EngineEntry.decode(v)))); // one copy: the snapshot may change
        Comparator<Map.Entry<String, EngineEntry>> byLoad =
                Comparator.<Map.Entry<String, EngineEntry>>comparingInt(e -> e.getValue().load()).thenComparing(Map.Entry::getKey);
        live.removeIf(e -> EngineStatus.gone(e.getValue().status()) || avoid.contains(e.getKey()));
        // As the library places on load alone: the least loaded engine whose status takes requests (the view's
        // contract), else the least loaded of all. Under disaggregated serving the decode pool is named too; the
        // hand-off is not priced here.
        PickPolicy.Handoff handoff = leastLoadedOf(live.stream().filter(e -> e.getValue().decodeOnly()).toList(), byLoad)
                .map(e -> new PickPolicy.Handoff(e.getKey(), 0)).orElse(PickPolicy.Handoff.NONE);
        return leastLoadedOf(live.stream().filter(e -> !e.getValue().decodeOnly()).toList(), byLoad)
                .map(e -> new Pick(e.getKey(), 0, Reason.FALLBACK_LOAD_ONLY.name(), -1, 0, answered, PickPolicy.Saving.NONE, handoff, 0, null))
                .orElseGet(() -> fallbackEngine(answered, requestId, avoid));
    }

    /** The least loaded of the engines whose status takes requests, else of all of them. */
    private static java.util.Optional<Map.Entry<String, EngineEntry>> leastLoadedOf(List<Map.Entry<String, EngineEntry>> engines,
                                                                                 Comparator<Map.Entry<String, EngineEntry>> byLoad) {
        return engines.stream().filter(e -> EngineStatus.takesRequests(e.getValue().status())).min(byLoad)
                .or(() -> engines.stream().min(byLoad));
    }

    /**
     * No engine known from the view or its last copy: the configured fallback engine with the fewest of
     * this client's requests in flight (counted until {@link #done(String)}; a pick without a request id is
     * not counted); no engine when none is configured or every one is avoided.
     */
    private Pick fallbackEngine(Source source, String requestId, java.util.Set<String> avoid) {
        return ownCounts.choose(options.fallbackEngines(), avoid).map(e -> {
            if (requestId != null) {
                ownCounts.started(requestId, e);
            }
            return new Pick(e, 0, Reason.FALLBACK_LOAD_ONLY.name(), -1, 0, source, PickPolicy.Saving.NONE, PickPolicy.Handoff.NONE, 0,
                    requestId);
        }).orElse(new Pick("", 0, Reason.NO_VIEW.name(), -1, 0, Source.NO_ENGINE, PickPolicy.Saving.NONE));
    }

    @Override
    public void close() {
        snapshots.shutdownNow();
        connection.close();
    }
}
