package dev.kvrouter.cli.bench;

import dev.kvrouter.balancer.KvRouterClient;
import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.contract.RedisSecurity;
import dev.kvrouter.contract.ViewLayout;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
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
 * GET of one key measured in the same run on the same Redis and client.
 */
final class PickBench {

    private static final int ENGINES = 16;
    private static final int PROMPTS = 64;

    private PickBench() {}

    static void run(String redisUrl, RedisSecurity security, int iterations, Duration maxPerCase, int threads, PrintStream out)
            throws Exception {
        String prefix = "bench-" + UUID.randomUUID().toString().substring(0, 8) + ":";
        ViewLayout layout = new ViewLayout(prefix);
        RedisClient client = security.standaloneClient(redisUrl);
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            RedisCommands<String, String> redis = c.sync();
            redis.functionLoad(ViewLayout.functionLibrary(), true);
            long now = System.currentTimeMillis();
            redis.hset(layout.metaKey(), Map.of("updated_ms", Long.toString(now), "busy_factor", "2.0", "confidence_floor", "0.05"));
            for (int e = 0; e < ENGINES; e++) {
                redis.hset(layout.enginesKey(), "engine-" + e, new EngineEntry("READY", e % 3, 2, 500, 600_000, 1, false, now).encode());
            }
            String one = prefix + "one";
            redis.set(one, "x".repeat(20));

            out.printf("kvr_pick vs GET on %s, %d engines, %d prompts per size, %d picks per case (at most %s), 1 and %d threads%n",
                    redisUrl, ENGINES, PROMPTS, iterations, maxPerCase, threads);
            out.printf("%-10s %10s %10s %14s %16s %12s %12s%n", "case", "p50 us", "p99 us", "ops/s 1 thr", "ops/s " + threads + " thr", "vs GET",
                    "server us");
            ServerTime getTime = ServerTime.of(redis, "get");
            Result get = measure(() -> redis.get(one), iterations, maxPerCase);
            double getServer = getTime.perCallSince(redis);
            List<StatefulRedisConnection<String, String>> connections = new ArrayList<>();
            List<Runnable> gets = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                StatefulRedisConnection<String, String> own = client.connect();
                connections.add(own);
                gets.add(() -> own.sync().get(one));
            }
            double getRate = concurrentRate(gets, iterations, maxPerCase);
            connections.forEach(StatefulRedisConnection::close);
            out.printf("%-10s %10.1f %10.1f %14.0f %16.0f %12s %12.1f%n", "GET", get.p50, get.p99, get.rate, getRate, "1.00", getServer);

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
                    ServerTime pickTime = ServerTime.of(redis, "fcall");
                    Result pick = measure(() -> router.pick(chains.get(next[0]++ % PROMPTS)), iterations, maxPerCase);
                    double pickServer = pickTime.perCallSince(redis);
                    List<KvRouterClient> clients = new ArrayList<>();
                    List<Runnable> picks = new ArrayList<>();
                    for (int t = 0; t < threads; t++) {
                        KvRouterClient own = new KvRouterClient(KvRouterClient.Options.defaults(redisUrl).withSecurity(security).withKeyPrefix(prefix)
                                .withMaxViewAge(Duration.ofHours(1)));
                        clients.add(own);
                        int[] i = {t};
                        picks.add(() -> own.pick(chains.get(i[0]++ % PROMPTS)));
                    }
                    double rate = concurrentRate(picks, iterations, maxPerCase);
                    clients.forEach(KvRouterClient::close);
                    var check = router.pick(chains.get(0));
                    if (check.matchedBlocks() != blocks) {
                        throw new IllegalStateException("the bench view is wrong: " + check);
                    }
                    out.printf("%-10s %10.1f %10.1f %14.0f %16.0f %12.2f %12.1f%n", blocks + " blocks", pick.p50, pick.p99, pick.rate, rate,
                            pick.rate / get.rate, pickServer);
                    if (blocks == 64) {
                        // The same picks read-only (kvr_peek: no reservation recorded), to split the
                        // function's cost between reading the view and recording the placement.
                        try (KvRouterClient observer = new KvRouterClient(KvRouterClient.Options.defaults(redisUrl).withSecurity(security)
                                .withKeyPrefix(prefix).withMaxViewAge(Duration.ofHours(1)).observing())) {
                            int[] at = {0};
                            ServerTime peekTime = ServerTime.of(redis, "fcall_ro");
                            Result peek = measure(() -> observer.pick(chains.get(at[0]++ % PROMPTS)), iterations, maxPerCase);
                            out.printf("%-10s %10.1f %10.1f %14.0f %16s %12.2f %12.1f%n", "  kvr_peek", peek.p50, peek.p99, peek.rate, "-",
                                    peek.rate / get.rate, peekTime.perCallSince(redis));
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
            ServerTime now = of(redis, command);
            return now.calls == calls ? Double.NaN : (double) (now.usec - usec) / (now.calls - calls);
        }
    }

    private static Result measure(Runnable op, int iterations, Duration max) {
        for (int i = 0; i < Math.min(2_000, iterations); i++) {
            op.run(); // warm-up: JIT and connection
        }
        Percentiles p = new Percentiles();
        long start = System.nanoTime();
        long deadline = start + max.toNanos();
        for (int i = 0; i < iterations && System.nanoTime() < deadline; i++) {
            long t = System.nanoTime();
            op.run();
            p.add(System.nanoTime() - t);
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
