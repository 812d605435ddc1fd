package dev.kvrouter.cli.bench;

import com.sun.net.httpserver.HttpServer;
import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.gateway.NginxGateway;
import dev.kvrouter.stack.LocalNginx;
import dev.kvrouter.stack.LocalRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code kvr bench gateway}: what routing by the view costs nginx. Two nginx, one worker each, in
 * front of the same engines — one routing by the view (the Lua library: body, hashes, {@code kvr_pick},
 * {@code kvr_done}), one proxying round robin without Lua — take the same requests, interleaved
 * round by round (view, stock, view, stock …). Per round: the latency the client saw (p50, p99),
 * requests/s, and nginx's CPU per request from process accounting (master and worker, which a busy
 * box does not move), and the view's worker's CPU spent hashing (its own counter). The engines answer
 * at once (no model: what is measured is the gateway), on loopback; the view is a private Redis with
 * the library and a fresh meta, so picks place cold prompts by load as a live view would its misses.
 */
final class GatewayBench {

    private static final int ENGINES = 4;
    private static final int PROMPTS = 64;
    private static final int CHUNK_TOKENS = ViewLayout.DEFAULT_CHUNK_TOKENS;
    private static final String MODEL = "bench-model";
    private static final Pattern COUNTER = Pattern.compile("(?m)^kvr_gateway_(\\w+)_total (\\S+)$");

    private GatewayBench() {}

    /** One round of one gateway. */
    record Round(String gateway, double p50Ms, double p99Ms, double perSecond, double cpuUsPerRequest, double decodeUsPerRequest,
                 double hashUsPerRequest,
                 double blocksPerRequest, int failed, int routedByView, Map<String, Integer> loadOnly) {}

    static void run(Map<String, String> viewMeta, List<Integer> blockSizes, int requests, int concurrency, int rounds, PrintStream out)
            throws Exception {
        // The engines' headers and body go out in two writes: without TCP_NODELAY, Nagle and the peer's delayed ACK
        // add 40 ms to each answer (read once, when the first HttpServer is made).
        System.setProperty("sun.net.httpserver.nodelay", "true");
        Path dir = Files.createTempDirectory("kvr-gateway-bench");
        List<HttpServer> engines = new ArrayList<>();
        ExecutorService engineThreads = Executors.newFixedThreadPool(4);
        ScheduledExecutorService refresher = Executors.newSingleThreadScheduledExecutor();
        try (LocalRedis redis = LocalRedis.start(dir.resolve("redis"))) {
            Map<String, String> addresses = new LinkedHashMap<>();
            for (int e = 0; e < ENGINES; e++) {
                HttpServer engine = engine(engineThreads);
                engines.add(engine);
                addresses.put("engine-" + e, "127.0.0.1:" + engine.getAddress().getPort());
            }
            RedisClient client = RedisClient.create(redis.url());
            try (StatefulRedisConnection<String, String> connection = client.connect()) {
                RedisCommands<String, String> r = connection.sync();
                r.functionLoad(ViewLayout.functionLibrary(), true);
                ViewLayout layout = new ViewLayout(ViewLayout.DEFAULT_KEY_PREFIX);
                r.hset(layout.metaKey(), viewMeta);
                writeView(r, layout, addresses.keySet());
                // The view stays fresh as a running job keeps it (the gateway trusts it for 2 s).
                refresher.scheduleWithFixedDelay(() -> writeView(r, layout, addresses.keySet()), 500, 500, TimeUnit.MILLISECONDS);

                NginxGateway view = NginxGateway.of(freePort(), addresses, "127.0.0.1", redis.port(), MODEL).withWorkers(1);
                NginxGateway stock = NginxGateway.of(freePort(), addresses, "127.0.0.1", redis.port(), MODEL).withWorkers(1)
                        .withBalancer(NginxGateway.Balancer.ROUND_ROBIN);
                try (LocalNginx viewNginx = start(dir.resolve("view"), view, out);
                     LocalNginx stockNginx = start(dir.resolve("stock"), stock, out)) {
                    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5))
                            .build();
                    out.printf(Locale.ROOT, "nginx routing by the view against nginx proxying round robin without Lua: one worker each, "
                            + "%d engines answering at once (loopback), %d requests a round at concurrency %d, %d rounds interleaved "
                            + "(view, stock, ...), after a warm-up%n", ENGINES, requests, concurrency, rounds);
                    for (int blocks : blockSizes) {
                        List<String> bodies = bodies(blocks);
                        measure(http, view, viewNginx, bodies, Math.min(500, requests), concurrency); // warm-up
                        measure(http, stock, stockNginx, bodies, Math.min(500, requests), concurrency);
                        List<Round> viewRounds = new ArrayList<>();
                        List<Round> stockRounds = new ArrayList<>();
                        out.printf(Locale.ROOT, "%n%d blocks (%d tokens) a prompt%n", blocks, blocks * CHUNK_TOKENS);
                        out.printf(Locale.ROOT, "%-6s %-6s %9s %9s %9s %16s %18s %16s %12s %7s %8s%n", "round", "nginx", "p50 ms", "p99 ms",
                                "req/s", "nginx CPU us/req", "decode CPU us/req", "hash CPU us/req", "blocks/req", "failed", "by view");
                        for (int round = 1; round <= rounds; round++) {
                            Round v = measure(http, view, viewNginx, bodies, requests, concurrency);
                            Round s = measure(http, stock, stockNginx, bodies, requests, concurrency);
                            viewRounds.add(v);
                            stockRounds.add(s);
                            print(out, round, v);
                            print(out, round, s);
                        }
                        Round v = median(viewRounds);
                        Round s = median(stockRounds);
                        out.printf(Locale.ROOT, "median: the view adds %.2f ms at p50 and %.2f ms at p99 (%.2f / %.2f against %.2f / %.2f); "
                                        + "%.0f against %.0f req/s (%.2f); nginx CPU %.0f against %.0f us a request (+%.0f), of which "
                                        + "decoding the body %.0f us, hashing %.0f us (%.2f us a block)%n",
                                v.p50Ms() - s.p50Ms(), v.p99Ms() - s.p99Ms(), v.p50Ms(), v.p99Ms(), s.p50Ms(), s.p99Ms(), v.perSecond(),
                                s.perSecond(), v.perSecond() / s.perSecond(), v.cpuUsPerRequest(), s.cpuUsPerRequest(),
                                v.cpuUsPerRequest() - s.cpuUsPerRequest(), v.decodeUsPerRequest(), v.hashUsPerRequest(),
                                v.blocksPerRequest() > 0 ? v.hashUsPerRequest() / v.blocksPerRequest() : 0.0);
                    }
                }
            } finally {
                refresher.shutdownNow();
                client.shutdown();
            }
        } finally {
            engines.forEach(e -> e.stop(0));
            engineThreads.shutdownNow();
        }
    }

    /** The view's meta kept fresh, and engines ready with their slots not known (nothing is held). */
    private static void writeView(RedisCommands<String, String> r, ViewLayout layout, java.util.Collection<String> engineIds) {
        long now = System.currentTimeMillis();
        r.hset(layout.metaKey(), "updated_ms", Long.toString(now));
        for (String id : engineIds) {
            r.hset(layout.enginesKey(), id, new EngineEntry("READY", 0, 0, 500, 600_000, 1, false, now).encode());
        }
    }

    private static LocalNginx start(Path prefix, NginxGateway gateway, PrintStream out) throws IOException {
        Files.createDirectories(prefix);
        return LocalNginx.start(prefix, gateway.render(prefix, LocalNginx.modulesDirectory()), gateway.listenPort(), out);
    }

    /** An engine that answers every completion at once, with the usage vLLM reports. */
    private static HttpServer engine(ExecutorService threads) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 256);
        byte[] answer = ("{\"id\":\"cmpl-bench\",\"object\":\"text_completion\",\"model\":\"" + MODEL + "\",\"choices\":[{\"index\":0,"
                + "\"text\":\"a\",\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"total_tokens\":2,"
                + "\"prompt_tokens_details\":{\"cached_tokens\":0}}}").getBytes(StandardCharsets.UTF_8);
        server.createContext("/", exchange -> {
            try (InputStream body = exchange.getRequestBody()) {
                body.transferTo(java.io.OutputStream.nullOutputStream());
            }
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, answer.length);
            exchange.getResponseBody().write(answer);
            exchange.close();
        });
        server.setExecutor(threads);
        server.start();
        return server;
    }

    /** PROMPTS completion requests of {@code blocks} blocks each, prompts as token ids. */
    private static List<String> bodies(int blocks) {
        Random random = new Random(blocks);
        List<String> bodies = new ArrayList<>();
        for (int p = 0; p < PROMPTS; p++) {
            StringBuilder b = new StringBuilder("{\"model\":\"" + MODEL + "\",\"max_tokens\":1,\"prompt\":[");
            for (int t = 0; t < blocks * CHUNK_TOKENS; t++) {
                b.append(t == 0 ? "" : ",").append(random.nextInt(50_000));
            }
            bodies.add(b.append("]}").toString());
        }
        return bodies;
    }

    private static Round measure(HttpClient http, NginxGateway gateway, LocalNginx nginx, List<String> bodies, int requests, int concurrency)
            throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + gateway.listenPort() + "/v1/completions");
        URI metrics = URI.create("http://127.0.0.1:" + gateway.listenPort() + "/kvr-metrics");
        boolean byView = gateway.balancer() == NginxGateway.Balancer.VIEW;
        Map<String, Double> before = byView ? counters(http, metrics) : Map.of();
        long cpuBefore = cpuNanos(nginx);
        long[] latencies = new long[requests];
        AtomicInteger next = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger routedByView = new AtomicInteger();
        ExecutorService clients = Executors.newFixedThreadPool(concurrency);
        long started = System.nanoTime();
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int c = 0; c < concurrency; c++) {
                done.add(clients.submit(() -> {
                    for (int i = next.getAndIncrement(); i < requests; i = next.getAndIncrement()) {
                        HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10))
                                .header("Content-Type", "application/json").header("X-Client-Id", "client-" + i % 16)
                                .POST(HttpRequest.BodyPublishers.ofString(bodies.get(i % bodies.size()))).build();
                        long t0 = System.nanoTime();
                        try {
                            HttpResponse<byte[]> response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
                            latencies[i] = System.nanoTime() - t0;
                            if (response.statusCode() != 200) {
                                failed.incrementAndGet();
                            }
                            if (response.headers().firstValue("X-Kvr-Route").orElse("").equals("view")) {
                                routedByView.incrementAndGet();
                            }
                        } catch (IOException e) {
                            latencies[i] = System.nanoTime() - t0;
                            failed.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            clients.shutdownNow();
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        long cpu = cpuNanos(nginx) - cpuBefore;
        Map<String, Double> after = byView ? counters(http, metrics) : Map.of();
        java.util.Arrays.sort(latencies);
        double hash = after.getOrDefault("hash_cpu_seconds", 0.0) - before.getOrDefault("hash_cpu_seconds", 0.0);
        double decode = after.getOrDefault("decode_cpu_seconds", 0.0) - before.getOrDefault("decode_cpu_seconds", 0.0);
        double blocks = after.getOrDefault("hashed_blocks", 0.0) - before.getOrDefault("hashed_blocks", 0.0);
        // Why requests were routed on load alone (the gateway's load_only_<why> counters), this round.
        Map<String, Integer> loadOnly = new java.util.TreeMap<>();
        after.forEach((name, value) -> {
            int n = (int) Math.round(value - before.getOrDefault(name, 0.0));
            if (name.startsWith("load_only_") && n > 0) {
                loadOnly.put(name.substring("load_only_".length()), n);
            }
        });
        return new Round(byView ? "view" : "stock", latencies[requests / 2] / 1e6, latencies[Math.min(requests - 1, (int) (requests * 0.99))] / 1e6,
                requests / seconds, cpu / 1e3 / requests, decode * 1e6 / requests, hash * 1e6 / requests, blocks / requests, failed.get(), routedByView.get(), loadOnly);
    }

    /** CPU time of nginx's master and workers so far (process accounting). */
    private static long cpuNanos(LocalNginx nginx) {
        ProcessHandle master = ProcessHandle.of(nginx.pid()).orElseThrow(() -> new IllegalStateException("nginx is gone"));
        long total = master.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
        for (ProcessHandle worker : master.children().toList()) {
            total += worker.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
        }
        return total;
    }

    private static Map<String, Double> counters(HttpClient http, URI metrics) throws Exception {
        String text = http.send(HttpRequest.newBuilder(metrics).build(), HttpResponse.BodyHandlers.ofString()).body();
        Map<String, Double> counters = new LinkedHashMap<>();
        Matcher m = COUNTER.matcher(text);
        while (m.find()) {
            counters.put(m.group(1), Double.parseDouble(m.group(2)));
        }
        return counters;
    }

    private static void print(PrintStream out, int round, Round r) {
        boolean view = r.gateway().equals("view");
        out.printf(Locale.ROOT, "%-6d %-6s %9.2f %9.2f %9.0f %16.0f %18s %16s %12s %7d %8s %s%n", round, r.gateway(), r.p50Ms(), r.p99Ms(),
                r.perSecond(), r.cpuUsPerRequest(), view ? String.format(Locale.ROOT, "%.0f", r.decodeUsPerRequest()) : "-",
                view ? String.format(Locale.ROOT, "%.0f", r.hashUsPerRequest()) : "-",
                view ? String.format(Locale.ROOT, "%.0f", r.blocksPerRequest()) : "-", r.failed(),
                view ? Integer.toString(r.routedByView()) : "-", r.loadOnly().isEmpty() ? "" : "on load: " + r.loadOnly());
    }

    /** Each figure's median over the rounds. */
    private static Round median(List<Round> rounds) {
        return new Round(rounds.get(0).gateway(), median(rounds, Round::p50Ms), median(rounds, Round::p99Ms), median(rounds, Round::perSecond),
                median(rounds, Round::cpuUsPerRequest), median(rounds, Round::decodeUsPerRequest), median(rounds, Round::hashUsPerRequest), median(rounds, Round::blocksPerRequest),
                rounds.stream().mapToInt(Round::failed).sum(), rounds.stream().mapToInt(Round::routedByView).sum(), Map.of());
    }

    private static double median(List<Round> rounds, java.util.function.ToDoubleFunction<Round> figure) {
        double[] values = rounds.stream().mapToDouble(figure).sorted().toArray();
        return values.length % 2 == 1 ? values[values.length / 2] : (values[values.length / 2 - 1] + values[values.length / 2]) / 2;
    }

    private static int freePort() throws IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
