package dev.kvrouter.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.stack.LocalNginx;
import dev.kvrouter.stack.LocalRedis;
import dev.kvrouter.stack.Ports;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real nginx (Debian's packages) with the gateway's Lua library, in front of two real HTTP engines,
 * routing by a view laid out by hand in a private Redis exactly as the sink writes it.
 */
class NginxGatewayITCase {

    private static final int CHUNK = 4;
    private static final long TAU = 600_000;
    /** The prompt: two full chunks and a partial one. */
    private static final int[] PROMPT = IntStream.rangeClosed(1, 9).toArray();
    /** What the engines report, as vLLM does with --enable-prompt-tokens-details. */
    private static final String USAGE = "\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":5,\"prompt_tokens_details\":{\"cached_tokens\":8}}";

    @TempDir
    static Path dir;
    private static LocalRedis redisServer;
    private static RedisClient client;
    private static StatefulRedisConnection<String, String> connection;
    private static RedisCommands<String, String> redis;
    private static final List<HttpServer> engines = new ArrayList<>();
    private static final Map<String, AtomicInteger> served = new ConcurrentHashMap<>();
    private static LocalNginx nginx;
    /** How long an engine a try failed on is left out (e3, where nothing listens, fails every try). */
    private static final Duration FAIL_TIMEOUT = Duration.ofSeconds(3);
    private static int port;
    private static final ViewLayout layout = new ViewLayout(ViewLayout.DEFAULT_KEY_PREFIX);
    private static final long[] chain = new CanonicalBlockHasher(CHUNK).chain("m", null, PROMPT, List.of());
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    static void start() {
        redisServer = LocalRedis.start(dir.resolve("redis"));
        client = RedisClient.create("redis://127.0.0.1:" + redisServer.port());
        connection = client.connect();
        redis = connection.sync();
        Map<String, String> addresses = new LinkedHashMap<>();
        for (String id : List.of("e1", "e2")) {
            addresses.put(id, "127.0.0.1:" + engine(id));
        }
        addresses.put("e3", "127.0.0.1:" + Ports.free()); // nothing listens there: a connect fails
        port = Ports.free();
        NginxGateway gateway = NginxGateway.of(port, addresses, "127.0.0.1", redisServer.port(), "m").withChunkTokens(CHUNK)
                .withMaxBodyBytes(4096).withHold(Duration.ofSeconds(3)).withFailTimeout(FAIL_TIMEOUT).withWorkers(2);
        Path prefix = dir.resolve("nginx");
        nginx = LocalNginx.start(prefix, gateway.render(prefix, LocalNginx.modulesDirectory()), port, System.err);
    }

    /** An engine that answers as vLLM's OpenAI server would, streamed when asked; X-Test-Delay-Ms holds the answer. */
    private static int engine(String id) {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
            served.put(id, new AtomicInteger());
            server.createContext("/", exchange -> {
                String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
                served.get(id).incrementAndGet();
                String delay = exchange.getRequestHeaders().getFirst("X-Test-Delay-Ms");
                exchange.getResponseHeaders().add("X-Engine", id);
                try {
                    if (delay != null) {
                        Thread.sleep(Long.parseLong(delay));
                    }
                    if (body.contains("\"stream\":true")) {
                        exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
                        exchange.sendResponseHeaders(200, 0);
                        try (OutputStream out = exchange.getResponseBody()) {
                            for (int i = 0; i < 5; i++) {
                                out.write(("data: {\"engine\":\"" + id + "\",\"choices\":[{\"text\":\"t" + i + "\"}]}\n\n").getBytes(StandardCharsets.UTF_8));
                                out.flush();
                                Thread.sleep(100);
                            }
                            if (body.contains("\"include_usage\":true")) {
                                out.write(("data: {\"choices\":[]," + USAGE + "}\n\n").getBytes(StandardCharsets.UTF_8));
                            }
                            out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
                        }
                        return;
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (IOException e) {
                    return; // the client went away mid-stream
                }
                byte[] answer = ("{\"engine\":\"" + id + "\"," + USAGE + "}").getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().add("Content-Type", "application/json");
                exchange.sendResponseHeaders(200, answer.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(answer);
                }
            });
            server.setExecutor(Executors.newFixedThreadPool(8));
            server.start();
            engines.add(server);
            return server.getAddress().getPort();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @AfterAll
    static void stop() {
        if (nginx != null) {
            nginx.close();
        }
        engines.forEach(s -> s.stop(0));
        if (connection != null) {
            connection.close();
            client.shutdown();
        }
        if (redisServer != null) {
            redisServer.close();
        }
    }

    @BeforeEach
    void view() {
        redis.flushall();
        redis.functionLoad(ViewLayout.functionLibrary(), true);
        fresh();
        for (String e : List.of("e1", "e2", "e3")) {
            redis.hset(layout.enginesKey(), e, new EngineEntry("READY", 0, 0, 500, TAU, 1, false, System.currentTimeMillis()).encode());
        }
        served.values().forEach(n -> n.set(0));
    }

    @AfterEach
    void reservationsDrain() {
        // Whatever a test did, every reservation the gateway made is released once its response ended.
        awaitTrue(() -> redis.hlen(layout.reservationsKey()) == 0, "reservations left: " + redis.hgetall(layout.reservationsKey()));
    }

    private void fresh() {
        redis.hset(layout.metaKey(), Map.of("updated_ms", Long.toString(System.currentTimeMillis()), "chunk_tokens", Integer.toString(CHUNK)));
    }

    /** The view says {@code engine} holds the prompt's two chunks. */
    private void holds(String engine) {
        String holder = ViewLayout.holder(engine, System.currentTimeMillis(), 1);
        redis.hset(layout.groupKey(ViewLayout.tag(chain, 1, ViewLayout.DEFAULT_TAG_DEPTH)), ViewLayout.hex(chain[0]), holder);
        redis.hset(layout.groupKey(ViewLayout.tag(chain, 2, ViewLayout.DEFAULT_TAG_DEPTH)), ViewLayout.hex(chain[1]), holder);
    }

    private HttpResponse<String> post(String path, String body, String... headers) throws Exception {
        fresh();
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A completion sent without freshening the view first (post does): for tests where Redis is away, paused or busy. */
    private HttpResponse<String> completionAsItIs() throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/completions"))
                .POST(HttpRequest.BodyPublishers.ofString(completion(false))).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String completion(boolean stream) {
        return "{\"model\":\"m\",\"prompt\":" + java.util.Arrays.toString(PROMPT).replace(" ", "") + ",\"stream\":" + stream + "}";
    }

    private static void awaitTrue(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    private String metrics() throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/kvr-metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    /** A counter of the gateway's metrics page (0 until counted: the counters are the nginx's, across tests). */
    private long counter(String name) throws Exception {
        for (String line : metrics().split("\n")) {
            if (line.startsWith("kvr_gateway_" + name + "_total ")) {
                return Long.parseLong(line.substring(line.indexOf(' ') + 1).trim());
            }
        }
        return 0;
    }

    @Test
    void aPromptOfTokenIdsGoesToTheEngineTheViewSaysHoldsIt() throws Exception {
        holds("e2");
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> r = post("/v1/completions", completion(false));
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("X-Engine")).as("the Lua hashes are the canonical ones: the holder matched").hasValue("e2");
            assertThat(r.headers().firstValue("X-Kvr-Route")).hasValue("view");
        }
        // The view moves: the next request follows it.
        redis.del(layout.groupKey(ViewLayout.tag(chain, 1, ViewLayout.DEFAULT_TAG_DEPTH)),
                layout.groupKey(ViewLayout.tag(chain, 2, ViewLayout.DEFAULT_TAG_DEPTH)));
        holds("e1");
        assertThat(post("/v1/completions", completion(false)).headers().firstValue("X-Engine")).hasValue("e1");
    }

    @Test
    void theAccessLogSaysWhatDecidedEachRequestAndWhatTheEngineReported() throws Exception {
        holds("e2");
        post("/v1/completions", completion(false), "X-Client-Id", "tenant-7", "X-Prefix-Class", "rag");
        // A stream that did not ask for usage: the gateway asks the engine for it (the cached tokens
        // the outcome counts) and the client does not get the extra event.
        String streamed = "{\"model\":\"m\",\"prompt\":[1,2,3,4,5,6,7,8,9],\"stream\":true}";
        HttpResponse<String> withoutUsage = post("/v1/completions", streamed);
        assertThat(withoutUsage.body()).contains("\"text\":\"t4\"", "data: [DONE]").doesNotContain("usage");
        // One that asked gets it.
        String asked = "{\"model\":\"m\",\"prompt\":[1,2,3,4,5,6,7,8,9],\"stream\":true,\"stream_options\":{\"include_usage\":true}}";
        assertThat(post("/v1/completions", asked).body()).contains("\"cached_tokens\":8");
        Path log = nginx.prefix().resolve("logs/kvr-access.log");
        awaitTrue(() -> lines(log).size() >= 3, "three lines in " + log);
        List<String> last = lines(log).subList(lines(log).size() - 3, lines(log).size());
        for (String line : last) {
            assertThat(line).contains("\"engine\":\"e2\"", "\"route\":\"view\"", "\"reason\":\"AFFINITY\"", "\"predicted_blocks\":\"2\"",
                    "\"prompt_tokens\":\"9\"", "\"cached_tokens\":\"8\"", "\"output_tokens\":\"5\"",
                    "\"blocks\":\"" + ViewLayout.hex(chain[0]) + ViewLayout.hex(chain[1]) + "\"");
            assertThat(line).containsPattern("\"ttft_ms\":\"[0-9.]+\"");
        }
        assertThat(last.get(0)).contains("\"client\":\"tenant-7\"", "\"class\":\"rag\"");
        assertThat(last.get(1)).as("the stream's first event came 100 ms before its last")
                .containsPattern("\"request_s\":\"0\\.[4-9]");
        assertThat(last.get(2)).containsPattern("\"request_s\":\"0\\.[4-9]");
    }

    private static List<String> lines(Path file) {
        try {
            return java.nio.file.Files.exists(file) ? java.nio.file.Files.readAllLines(file) : List.of();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void aStreamedResponseHoldsItsReservationUntilItsLastEventThenReleasesIt() throws Exception {
        holds("e2");
        CompletableFuture<HttpResponse<String>> streaming = CompletableFuture.supplyAsync(() -> {
            try {
                return post("/v1/completions", completion(true));
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        awaitTrue(() -> redis.hlen(layout.reservationsKey()) == 1, "the streamed request's reservation");
        assertThat(redis.hvals(layout.reservationsKey()).get(0)).startsWith("e2|");
        HttpResponse<String> r = streaming.get();
        assertThat(r.body()).contains("t4").endsWith("data: [DONE]\n\n");
        // (reservationsDrain: released when the stream ended)
    }

    @Test
    void aClientThatGoesAwayMidStreamLeavesNoReservation() throws Exception {
        holds("e2");
        fresh();
        String body = completion(true);
        try (Socket socket = new Socket("127.0.0.1", port)) {
            OutputStream out = socket.getOutputStream();
            out.write(("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " + body.length()
                    + "\r\n\r\n" + body).getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] first = new byte[64];
            assertThat(in.read(first)).isPositive(); // the response has started
            assertThat(redis.hlen(layout.reservationsKey())).isEqualTo(1);
        }
        // (reservationsDrain: the log phase ran for the aborted request and released it)
    }

    /** Until e3's last failed try (an earlier test's) has lapsed: the view picks it again. */
    private void awaitNotFailedLately(String engine) {
        long deadline = System.nanoTime() + FAIL_TIMEOUT.plusSeconds(5).toNanos();
        while (true) {
            try {
                if (!metrics().contains("kvr_gateway_failed_lately{engine=\"" + engine + "\"}")) {
                    return;
                }
                assertThat(System.nanoTime()).as(engine + " still left out").isLessThan(deadline);
                Thread.sleep(50);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }
    }

    @Test
    void aHolderThatRefusesConnectionsIsRetriedElsewhereAndTheReservationFollowsTheRequest() throws Exception {
        awaitNotFailedLately("e3");
        long retriedBefore = counter("retried");
        holds("e3");
        CompletableFuture<HttpResponse<String>> slow = CompletableFuture.supplyAsync(() -> {
            try {
                return post("/v1/completions", completion(false), "X-Test-Delay-Ms", "1500");
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        awaitTrue(() -> served.get("e1").get() + served.get("e2").get() == 1, "the retry reached a live engine");
        String servedBy = served.get("e1").get() == 1 ? "e1" : "e2";
        awaitTrue(() -> redis.hvals(layout.reservationsKey()).stream().anyMatch(v -> v.startsWith(servedBy + "|")),
                "the reservation moved from e3 to " + servedBy + ": " + redis.hgetall(layout.reservationsKey()));
        assertThat(redis.hlen(layout.reservationsKey())).isEqualTo(1);
        HttpResponse<String> r = slow.get();
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("X-Engine")).hasValue(servedBy);
        assertThat(counter("retried")).isEqualTo(retriedBefore + 1);
    }

    @Test
    void anEngineATryJustFailedOnIsLeftOutOfTheViewsPicksAndOfLeastConnectionsUntilItsFailTimeout() throws Exception {
        awaitNotFailedLately("e3");
        long retriedBefore = counter("retried");
        long failedBefore = counter("engine_failed");
        holds("e3");
        HttpResponse<String> first = post("/v1/completions", completion(false));
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(counter("retried")).as("the view's pick, e3, refused the connection").isEqualTo(retriedBefore + 1);
        assertThat(counter("engine_failed")).isEqualTo(failedBefore + 1);
        assertThat(metrics()).contains("kvr_gateway_failed_lately{engine=\"e3\"} 1");
        // The view still says e3 holds the prompt (its reports have not stopped yet): the pick leaves it out.
        HttpResponse<String> next = post("/v1/completions", completion(false));
        assertThat(next.statusCode()).isEqualTo(200);
        assertThat(next.headers().firstValue("X-Kvr-Route")).hasValue("view");
        assertThat(next.headers().firstValue("X-Engine")).isNotEmpty();
        // With Redis away, least connections leaves it out too, though nothing is in flight there.
        redisServer.stop();
        try {
            for (int i = 0; i < 6; i++) {
                HttpResponse<String> r = completionAsItIs();
                assertThat(r.statusCode()).isEqualTo(200);
            }
        } finally {
            redisServer.restartEmpty();
        }
        assertThat(counter("retried")).as("no request tried e3 again within its fail timeout").isEqualTo(retriedBefore + 1);
    }

    @Test
    void aPickThatTimesOutAndRunsLateInRedisLeavesNoReservation() throws Exception {
        long timeoutsBefore = counter("load_only_redis_timeout");
        holds("e1");
        fresh();
        // Redis busy for 400 ms with another client's script (as behind a burst's queued picks): the pick times out, the
        // request goes on load alone, and Redis runs the pick when it gets to it: a reservation for a request that went elsewhere.
        try (StatefulRedisConnection<String, String> other = client.connect()) {
            other.async().eval("local t0 = redis.call('TIME') local start = t0[1] * 1e6 + t0[2] "
                    + "while true do local t = redis.call('TIME') if t[1] * 1e6 + t[2] - start > 400000 then return 1 end end",
                    io.lettuce.core.ScriptOutputType.INTEGER);
            Thread.sleep(30);
            HttpResponse<String> r = completionAsItIs();
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("X-Kvr-Route")).hasValue("load_only; redis_timeout");
            assertThat(counter("load_only_redis_timeout")).isEqualTo(timeoutsBefore + 1);
        }
        // (reservationsDrain: kvr_done followed the late pick and released what it made, long before its TTL)
    }

    @Test
    void whileEveryEngineIsFullARequestWaitsAtTheGatewayAndTakesTheFirstSlotFreed() throws Exception {
        long heldBefore = counter("held");
        holds("e1");
        for (String e : List.of("e1", "e2", "e3")) { // one slot each, taken
            redis.hset(layout.enginesKey(), e, new EngineEntry("READY", 0, 1, 500, TAU, 1, false, System.currentTimeMillis(), EngineEntry.BOTH,
                    1, 0, 20_000).encode());
        }
        long start = System.nanoTime();
        CompletableFuture<HttpResponse<String>> waiting = CompletableFuture.supplyAsync(() -> {
            try {
                return post("/v1/completions", completion(false));
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        Thread.sleep(150);
        assertThat(waiting).as("held while every slot is taken").isNotDone();
        assertThat(served.get("e1").get() + served.get("e2").get()).isZero();
        // e2 reports a slot free: the held request goes there at its next ask.
        redis.hset(layout.enginesKey(), "e2", new EngineEntry("READY", 0, 0, 500, TAU, 1, false, System.currentTimeMillis(), EngineEntry.BOTH,
                1, 0, 20_000).encode());
        fresh();
        HttpResponse<String> r = waiting.get();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("not the 3 s hold: the slot freed").isBetween(Duration.ofMillis(150),
                Duration.ofMillis(2_500));
        assertThat(r.headers().firstValue("X-Engine")).hasValue("e2");
        assertThat(r.headers().firstValue("X-Kvr-Route")).hasValue("view");
        assertThat(counter("held")).isEqualTo(heldBefore + 1);
    }

    @Test
    void heldRequestsWaitInLineAndOnlyEachWorkersOldestAsksTheView() throws Exception {
        holds("e1");
        for (String e : List.of("e1", "e2", "e3")) { // one slot each, taken
            redis.hset(layout.enginesKey(), e, new EngineEntry("READY", 0, 1, 500, TAU, 1, false, System.currentTimeMillis(), EngineEntry.BOTH,
                    1, 0, 20_000).encode());
        }
        int held = 8;
        List<CompletableFuture<HttpResponse<String>>> waiting = new java.util.ArrayList<>();
        for (int i = 0; i < held; i++) {
            waiting.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return post("/v1/completions", completion(false));
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }));
        }
        awaitTrue(() -> redis.zcard(layout.heldRequestsKey()) == held, "every request held");
        long fcallsBefore = fcalls();
        long start = System.nanoTime();
        // Past the library's HOLD_STALE_MS (1 s): a held request nobody asked for or kept loses its place.
        while (System.nanoTime() - start < Duration.ofMillis(1_400).toNanos()) {
            fresh();
            Thread.sleep(100);
        }
        double polls = (System.nanoTime() - start) / 25e6;
        long fcalls = fcalls() - fcallsBefore;
        assertThat(redis.zcard(layout.heldRequestsKey())).as("every place kept (kvr_holding)").isEqualTo(held);
        // Each of the two workers' oldest asks once a poll, and keeps the others' places every 250 ms; every held
        // request asking each poll would be `held` times the polls.
        assertThat((double) fcalls).as("FCALLs in %.0f polls of %d held requests", polls, held).isLessThan(2.6 * polls + 20);
        assertThat(waiting).noneMatch(CompletableFuture::isDone);
        // Slots free for all of them (e3, where nothing listens, takes none): each worker's line drains at once, not one
        // request a poll.
        for (String e : List.of("e1", "e2", "e3")) {
            redis.hset(layout.enginesKey(), e, new EngineEntry(e.equals("e3") ? "BUSY" : "READY", 0, 0, 500, TAU, 1, false,
                    System.currentTimeMillis(), EngineEntry.BOTH, 4, 0, 20_000).encode());
        }
        fresh();
        long freed = System.nanoTime();
        for (CompletableFuture<HttpResponse<String>> w : waiting) {
            HttpResponse<String> r = w.get(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("X-Kvr-Route")).hasValue("view");
        }
        assertThat(Duration.ofNanos(System.nanoTime() - freed)).as("the lines drained").isLessThan(Duration.ofMillis(1_000));
        assertThat(redis.zcard(layout.heldRequestsKey())).isZero();
    }

    /** FCALLs Redis has run (every function: kvr_pick, kvr_holding, kvr_done). */
    private long fcalls() {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("cmdstat_fcall:calls=(\\d+)").matcher(redis.info("commandstats"));
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    @Test
    void textIsRoutedOnLoadAloneAndSaysSo() throws Exception {
        HttpResponse<String> r = post("/v1/chat/completions", "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("X-Kvr-Route")).hasValue("load_only; text");
        assertThat(counter("load_only_text")).isPositive();
        HttpResponse<String> adapter = post("/v1/completions", completion(false).replace("\"model\":\"m\"", "\"model\":\"m-lora-a\""));
        assertThat(adapter.headers().firstValue("X-Kvr-Route")).as("another root for its hashes").hasValue("load_only; other_model");
        HttpResponse<String> batch = post("/v1/completions", "{\"model\":\"m\",\"prompt\":[[1,2,3,4],[5,6,7,8]]}");
        assertThat(batch.headers().firstValue("X-Kvr-Route")).hasValue("load_only; batch");
    }

    @Test
    void withoutAViewOrWithoutTheLibraryEveryRequestIsStillServedOnLoadAlone() throws Exception {
        redis.del(layout.metaKey());
        HttpResponse<String> noView = completionAsItIs();
        assertThat(noView.statusCode()).isEqualTo(200);
        assertThat(noView.headers().firstValue("X-Kvr-Route")).hasValue("load_only; no_view");
        redis.functionFlush(io.lettuce.core.FlushMode.SYNC);
        HttpResponse<String> noLibrary = post("/v1/completions", completion(false));
        assertThat(noLibrary.statusCode()).isEqualTo(200);
        assertThat(noLibrary.headers().firstValue("X-Kvr-Route")).hasValue("load_only; no_library");
        assertThat(metrics()).contains("kvr_gateway_load_only_no_view_total").contains("kvr_gateway_load_only_no_library_total");
    }

    @Test
    void withRedisAwayEveryRequestIsServedOnLeastConnections() throws Exception {
        long awayBefore = counter("load_only_redis_away");
        holds("e2");
        redisServer.stop();
        try {
            for (int i = 0; i < 4; i++) {
                HttpResponse<String> r = completionAsItIs();
                assertThat(r.statusCode()).isEqualTo(200);
                assertThat(r.headers().firstValue("X-Kvr-Route")).hasValue("load_only; redis_away");
            }
            assertThat(served.get("e1").get()).as("ties spread over the engines").isPositive();
            assertThat(served.get("e2").get()).isPositive();
        } finally {
            redisServer.restartEmpty();
        }
        assertThat(counter("load_only_redis_away")).isEqualTo(awayBefore + 4);
    }

    @Test
    void aBodyOverTheBoundIsRefusedWith413() throws Exception {
        String big = "{\"model\":\"m\",\"prompt\":[" + "1,".repeat(3000) + "1]}";
        assertThat(post("/v1/completions", big).statusCode()).isEqualTo(413);
        assertThat(served.get("e1").get() + served.get("e2").get()).isZero();
    }
}
