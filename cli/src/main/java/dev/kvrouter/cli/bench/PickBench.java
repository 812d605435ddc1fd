package dev.kvrouter.cli.bench;

import dev.kvrouter.balancer.KvRouterClient;
import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.contract.RedisSecurity;
import dev.kvrouter.contract.ViewLayout;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code kvr bench pick}: kvr_pick latency and rate for prompts of several lengths, against a raw
 * GET of one key measured in the same run on the same Redis and client. The picks take the path a
 * balancer's do in a running fleet: the view's meta as the job writes it (the prefill rate known, so
 * the least-delay placement and the pending prefixes run), engines with their slots and slot time
 * learned, and every pick reserving its engine under a request id, reported done 64 at a time (one
 * {@code kvr_done}, outside the timing and out of the server time), so every engine carries a few
 * live reservations as it would.
 */
final class PickBench {

    private static final int ENGINES = 16;
    private static final int PROMPTS = 64;
    /** Requests a balancer reports done in one kvr_done call. */
    private static final int DONE_BATCH = 64;
    /** Clients the picks are made for (the client cap reads each one's reservations). */
    private static final int CLIENTS = 32;

    private PickBench() {}

    /**
     * @param viewMeta the meta figures the job writes beside the view (its defaults), but updated_ms
     * @param concurrency the client counts each concurrent rate is measured at (a connection and thread each)
     */
    static void run(String redisUrl, RedisSecurity security, Map<String, String> viewMeta, int iterations, Duration maxPerCase,
                    List<Integer> concurrency, PrintStream out) throws Exception {
        String prefix = "bench-" + UUID.randomUUID().toString().substring(0, 8) + ":";
        ViewLayout layout = new ViewLayout(prefix);
        RedisClient client = security.standaloneClient(redisUrl);
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            RedisCommands<String, String> redis = c.sync();
            redis.functionLoad(ViewLayout.functionLibrary(), true);
            long now = System.currentTimeMillis();
            Map<String, String> meta = new java.util.HashMap<>(viewMeta);
            meta.put("updated_ms", Long.toString(now));
            redis.hset(layout.metaKey(), meta);
            for (int e = 0; e < ENGINES; e++) {
                // Slots and slot time learned, the prefill rate the configured one; a few slots free on each.
                redis.hset(layout.enginesKey(), "engine-" + e,
                        new EngineEntry("READY", 0, 2 + e % 4, 500, 600_000, 1, false, now, EngineEntry.BOTH, 8, 0, 4_000).encode());
            }
            String one = prefix + "one";
            redis.set(one, "x".repeat(20));

            out.printf("kvr_pick vs GET on %s, %d engines, %d prompts per size, %d picks per case (at most %s), 1 and %s clients"
                    + " (a connection and thread each)%n", redisUrl, ENGINES, PROMPTS, iterations, maxPerCase, concurrency);
            StringBuilder header = new StringBuilder(String.format("%-10s %10s %10s %12s", "case", "p50 us", "p99 us", "ops/s 1 cl"));
            concurrency.forEach(n -> header.append(String.format(" %12s", "ops/s " + n + " cl")));
            header.append(String.format(" %10s", "vs GET"));
            concurrency.forEach(n -> header.append(String.format(" %10s", "at " + n + " cl")));
            out.println(header.append(String.format(" %10s", "server us")));
            ServerTime getTime = ServerTime.of(redis, "get");
            Result get = measure(() -> redis.get(one), () -> {}, iterations, maxPerCase);
            double getServer = getTime.perCallSince(redis);
            double[] getRates = new double[concurrency.size()];
            for (int k = 0; k < getRates.length; k++) {
                getRates[k] = concurrentGetRate(client, one, concurrency.get(k), iterations, maxPerCase);
            }
            out.println(row("GET", get, getRates, get.rate, getRates, getServer));

            Random random = new Random(1);
            try (KvRouterClient router = new KvRouterClient(KvRouterClient.Options.defaults(redisUrl).withSecurity(security).withKeyPrefix(prefix)
                    .withMaxViewAge(Duration.ofHours(1)))) {
                for (int blocks : new int[] {8, 64, 512, 2048}) {
                    List<long[]> chains = new ArrayList<>();
                    for (int p = 0; p < PROMPTS; p++) {
                        long[] chain = random.longs(blocks).toArray();
                        chains.add(chain);
                        String[] holders = {"engine-" + random.nextInt(ENGINES), "engine-" + random.nextInt(ENGINES)};
                        for (int i = 0; i < blocks; i++) {
                            StringBuilder v = new StringBuilder(ViewLayout.holder(holders[0], now, 1));
                            if (!holders[1].equals(holders[0])) {
                                v.append(',').append(ViewLayout.holder(holders[1], now, 1));
                            }
                            redis.hset(layout.groupKey(ViewLayout.tag(chain, i + 1, 2)), ViewLayout.hex(chain[i]), v.toString());
                        }
                    }
                    int[] next = {0};
                    Placements placements = new Placements(router, redis, layout, "seq", true);
                    ServerTime pickTime = ServerTime.of(redis, "fcall");
                    Result pick = measure(() -> placements.pick(chains.get(next[0]++ % PROMPTS)), placements::settle, iterations, maxPerCase);
                    double pickServer = pickTime.perCallSince(redis, placements.doneCalls, placements.doneUsec);
                    placements.finish();
                    double[] rates = new double[concurrency.size()];
                    for (int k = 0; k < rates.length; k++) {
                        rates[k] = concurrentPickRate(client, redisUrl, security, prefix, layout, chains, concurrency.get(k), "c" + k,
                                iterations, maxPerCase);
                    }
                    var check = router.pick(chains.get(0));
                    if (check.bestHolderBlocks() != blocks) {
                        throw new IllegalStateException("the bench view is wrong: " + check);
                    }
                    out.println(row(blocks + " blocks", pick, rates, get.rate, getRates, pickServer));
                    if (blocks == 64) {
                        // What reporting them done costs Redis, per request (64 to a kvr_done call).
                        out.printf("%-10s %10s %10s %12s%s %10s%s %10.1f%n", "  kvr_done", "-", "-", "-",
                                String.format(" %12s", "-").repeat(concurrency.size()), "-", String.format(" %10s", "-").repeat(concurrency.size()),
                                placements.reported == 0 ? Double.NaN : (double) placements.doneUsec / placements.reported);
                        // The same picks read-only (kvr_peek: no reservation recorded), to split the
                        // function's cost between reading the view and recording the placement.
                        try (KvRouterClient observer = new KvRouterClient(KvRouterClient.Options.defaults(redisUrl).withSecurity(security)
                                .withKeyPrefix(prefix).withMaxViewAge(Duration.ofHours(1)).observing())) {
                            int[] at = {0};
                            ServerTime peekTime = ServerTime.of(redis, "fcall_ro");
                            Result peek = measure(() -> observer.pick(chains.get(at[0]++ % PROMPTS)), () -> {}, iterations, maxPerCase);
                            double[] none = new double[concurrency.size()];
                            java.util.Arrays.fill(none, Double.NaN);
                            out.println(row("  kvr_peek", peek, none, get.rate, getRates, peekTime.perCallSince(redis)));
                        }
                    }
                }
            }
            ScanIterator<String> keys = ScanIterator.scan(redis, ScanArgs.Builder.matches(prefix + "*").limit(1000));
            List<String> all = new ArrayList<>();
            keys.forEachRemaining(all::add);
            if (!all.isEmpty()) {
                redis.del(all.toArray(String[]::new));
            }
        } finally {
            client.shutdown();
        }
    }

    private record Result(double p50, double p99, double rate) {}

    /** One line of the table: latency and rates, each rate beside GET's at the same client count ("-" where not measured). */
    private static String row(String name, Result one, double[] rates, double getRate, double[] getRates, double serverUsec) {
        StringBuilder line = new StringBuilder(String.format("%-10s %10.1f %10.1f %12.0f", name, one.p50, one.p99, one.rate));
        for (double rate : rates) {
            line.append(Double.isNaN(rate) ? String.format(" %12s", "-") : String.format(" %12.0f", rate));
        }
        line.append(String.format(" %10.2f", one.rate / getRate));
        for (int k = 0; k < rates.length; k++) {
            line.append(Double.isNaN(rates[k]) ? String.format(" %10s", "-") : String.format(" %10.2f", rates[k] / getRates[k]));
        }
        return line.append(String.format(" %10.1f", serverUsec)).toString();
    }

    /** GETs per second with {@code clients} clients at once, each its own connection and thread: the ceiling beside the picks'. */
    private static double concurrentGetRate(RedisClient client, String key, int clients, int iterations, Duration maxPerCase) throws Exception {
        List<StatefulRedisConnection<String, String>> connections = new ArrayList<>();
        List<Runnable> gets = new ArrayList<>();
        try {
            for (int t = 0; t < clients; t++) {
                StatefulRedisConnection<String, String> own = client.connect();
                connections.add(own);
                gets.add(() -> own.sync().get(key));
            }
            return concurrentRate(gets, iterations, maxPerCase);
        } finally {
            connections.forEach(StatefulRedisConnection::close);
        }
    }

    /**
     * Picks per second with {@code clients} balancers picking at once, each its own client, connection
     * and thread, reserving and reporting done as {@link Placements} does (the done calls counted as the
     * work they are: one per DONE_BATCH picks).
     */
    private static double concurrentPickRate(RedisClient client, String redisUrl, RedisSecurity security, String prefix, ViewLayout layout,
                                             List<long[]> chains, int clients, String name, int iterations, Duration maxPerCase)
            throws Exception {
        List<KvRouterClient> routers = new ArrayList<>();
        List<StatefulRedisConnection<String, String>> doneConnections = new ArrayList<>();
        List<Placements> threadPlacements = new ArrayList<>();
        List<Runnable> picks = new ArrayList<>();
        try {
            for (int t = 0; t < clients; t++) {
                KvRouterClient own = new KvRouterClient(KvRouterClient.Options.defaults(redisUrl).withSecurity(security).withKeyPrefix(prefix)
                        .withMaxViewAge(Duration.ofHours(1)));
                routers.add(own);
                StatefulRedisConnection<String, String> doneConnection = client.connect();
                doneConnections.add(doneConnection);
                Placements mine = new Placements(own, doneConnection.sync(), layout, name + "-t" + t, false);
                threadPlacements.add(mine);
                int[] i = {t};
                picks.add(() -> {
                    mine.pick(chains.get(i[0]++ % PROMPTS));
                    mine.settle();
                });
            }
            double rate = concurrentRate(picks, iterations, maxPerCase);
            threadPlacements.forEach(Placements::finish);
            return rate;
        } finally {
            routers.forEach(KvRouterClient::close);
            doneConnections.forEach(StatefulRedisConnection::close);
        }
    }

    /**
     * Picks as one balancer makes them: each reserves its engine under a new request id for one of
     * CLIENTS clients, and the requests are reported done DONE_BATCH at a time in one kvr_done call,
     * whose calls and server time are kept (when {@code accounted}) so that the pick's own server time
     * can leave them out.
     */
    private static final class Placements {
        private final KvRouterClient router;
        private final RedisCommands<String, String> redis;
        private final String[] doneKeys;
        private final String name;
        private final boolean accounted;
        private final List<String> open = new ArrayList<>();
        private long requests;
        long doneCalls;
        long doneUsec;
        /** Requests reported done under the accounting. */
        long reported;

        Placements(KvRouterClient router, RedisCommands<String, String> redis, ViewLayout layout, String name, boolean accounted) {
            this.router = router;
            this.redis = redis;
            this.doneKeys = layout.functionKeys();
            this.name = name;
            this.accounted = accounted;
        }

        void pick(long[] chain) {
            long n = requests++;
            String id = name + "-" + n;
            router.pick(chain, "bench", "client-" + n % CLIENTS, id, java.util.Set.of());
            open.add(id);
        }

        /** Reports the open requests done once there are DONE_BATCH of them. */
        void settle() {
            if (open.size() >= DONE_BATCH) {
                finish();
            }
        }

        /** Reports every open request done. */
        void finish() {
            if (open.isEmpty()) {
                return;
            }
            ServerTime before = accounted ? ServerTime.of(redis, "fcall") : null;
            redis.fcall(ViewLayout.DONE_FUNCTION, ScriptOutputType.INTEGER, doneKeys, open.toArray(String[]::new));
            if (accounted) {
                ServerTime after = ServerTime.of(redis, "fcall");
                doneCalls += after.calls() - before.calls();
                doneUsec += after.usec() - before.usec();
                reported += open.size();
            }
            open.clear();
        }
    }

    /**
     * Redis's own accounting of one command (INFO commandstats: calls and microseconds spent in it),
     * so a case's server time per call is read beside the client's latency: a figure the client's
     * side of a busy box does not move. Other clients' calls of the same command count too: the
     * bench assumes it is the only caller of FCALL on this Redis while it runs.
     */
    private record ServerTime(String command, long calls, long usec) {
        static ServerTime of(RedisCommands<String, String> redis, String command) {
            String stats = redis.info("commandstats");
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("cmdstat_" + command + ":calls=(\\d+),usec=(\\d+)").matcher(stats);
            return m.find() ? new ServerTime(command, Long.parseLong(m.group(1)), Long.parseLong(m.group(2))) : new ServerTime(command, 0, 0);
        }

        /** Microseconds per call since this reading (warm-up included). */
        double perCallSince(RedisCommands<String, String> redis) {
            return perCallSince(redis, 0, 0);
        }

        /** The same, leaving out calls of the command made meanwhile that are not the ones measured (and their time). */
        double perCallSince(RedisCommands<String, String> redis, long otherCalls, long otherUsec) {
            ServerTime now = of(redis, command);
            long measured = now.calls - calls - otherCalls;
            return measured <= 0 ? Double.NaN : (double) (now.usec - usec - otherUsec) / measured;
        }
    }

    /** Times {@code op}; {@code between} runs after each one, untimed. */
    private static Result measure(Runnable op, Runnable between, int iterations, Duration max) {
        for (int i = 0; i < Math.min(2_000, iterations); i++) {
            op.run(); // warm-up: JIT and connection
            between.run();
        }
        Percentiles p = new Percentiles();
        long start = System.nanoTime();
        long deadline = start + max.toNanos();
        for (int i = 0; i < iterations && System.nanoTime() < deadline; i++) {
            long t = System.nanoTime();
            op.run();
            p.add(System.nanoTime() - t);
            between.run();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        return new Result(p.micros(0.5), p.micros(0.99), p.count() / seconds);
    }

    /** Ops/s of several clients, each running its own sequential loop. */
    private static double concurrentRate(List<Runnable> ops, int iterations, Duration max) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(ops.size());
        AtomicLong done = new AtomicLong();
        try {
            long start = System.nanoTime();
            long deadline = start + max.toNanos();
            List<Future<?>> futures = new ArrayList<>();
            for (Runnable op : ops) {
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < iterations && System.nanoTime() < deadline; i++) {
                        op.run();
                        done.incrementAndGet();
                    }
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
            return done.get() / ((System.nanoTime() - start) / 1e9);
        } finally {
            pool.shutdownNow();
        }
    }
}
