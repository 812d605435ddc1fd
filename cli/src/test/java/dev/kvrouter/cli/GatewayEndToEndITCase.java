package dev.kvrouter.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kvrouter.bridge.Bridge;
import dev.kvrouter.bridge.BridgeConfig;
import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.gateway.NginxGateway;
import dev.kvrouter.httpfleet.HttpEngine;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.jobs.view.KvRouterJob;
import dev.kvrouter.sim.engine.EngineConfig;
import dev.kvrouter.sim.engine.Failure;
import dev.kvrouter.stack.LocalNginx;
import dev.kvrouter.stack.LocalRedis;
import dev.kvrouter.stack.Ports;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.LocalStackExtension;
import dev.kvrouter.stack.junit.UniqueNames;
import dev.kvrouter.topics.TopicApplier;
import dev.kvrouter.topics.TopicCatalog;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole path with nothing laid by hand: clients → a real nginx with the gateway's Lua library
 * → three simulated engines over HTTP (vLLM's endpoints, ZMQ KV events, /metrics) → the bridge →
 * Kafka → the kv-router job → Redis → back to nginx's next pick. The tests run in order on one
 * fleet, each leaving it as the next expects: a reused prefix goes to its holder; one client's burst
 * spreads; a body that is not a request is routed on load and answered by the engine; streamed, aborted and broken responses (an engine killed mid-stream) all release their
 * reservations; the killed engine gets no more requests; Redis killed, every request is still
 * served, and routing returns to the view once Redis is back; the job stopped, the view empties and
 * nginx routes on load, saying so.
 */
@ExtendWith(LocalStackExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GatewayEndToEndITCase {

    private static final Duration WAIT = Duration.ofSeconds(60);
    /** Reservations released by kvr_done come back to zero in this, far below their TTL (view.reservation-ttl, 1 min). */
    private static final Duration DRAIN = Duration.ofSeconds(10);
    private static final int CHUNK = 16;
    /** Small and fast: prompts of a few hundred tokens take milliseconds, 20 output tokens 0.1 s. */
    private static final EngineConfig ENGINE = EngineConfig.defaults().withCapacity(4_096).withRates(50_000, 200).withMaxRunning(8)
            .withHeartbeatMs(200).withSlotsReported(true);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dir;
    private final Map<String, HttpEngine> engines = new LinkedHashMap<>();
    /** Engine id by the address nginx names in X-Kvr-Upstream. */
    private final Map<String, String> idByAddress = new LinkedHashMap<>();
    private LocalRedis redisServer;
    private RedisClient redisClient;
    private RedisCommands<String, String> redis;
    private Bridge bridge;
    private JobClient job;
    private LocalNginx nginx;
    private int port;
    private ViewLayout layout;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final Random random = new Random(36);
    /** The prompt the first test places; later tests reuse it. */
    private int[] shared;
    private String holder;

    @BeforeAll
    void startTheWholePath(StackAddresses stack) throws Exception {
        String topics = UniqueNames.topic("it-gateway-e2e") + ".";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", stack.kafkaBootstrap()))) {
            TopicApplier applier = new TopicApplier(admin, Duration.ofSeconds(30));
            assertThat(applier.apply(applier.plan(TopicCatalog.bundled().withPrefix(topics)))).isEmpty();
        }
        StringBuilder enginesFile = new StringBuilder("engines:\n");
        Map<String, String> upstreams = new LinkedHashMap<>();
        for (int i = 0; i < 3; i++) {
            HttpEngine e = HttpEngine.start("gw-e" + i, ENGINE);
            engines.put(e.id(), e);
            upstreams.put(e.id(), "127.0.0.1:" + e.httpPort());
            idByAddress.put("127.0.0.1:" + e.httpPort(), e.id());
            enginesFile.append(e.bridgeEntry());
        }
        Path file = dir.resolve("engines.yaml");
        Files.writeString(file, enginesFile);
        BridgeConfig bridgeConfig = BridgeConfig.from(Map.of("kafka.bootstrap", stack.kafkaBootstrap(),
                "schema-registry.url", stack.schemaRegistryUrl(), "topics.prefix", topics, "engines.file", file.toString(),
                "report.interval", "1 h"));
        Bridge.checkTopics(bridgeConfig, Duration.ofSeconds(30));
        bridge = Bridge.start(bridgeConfig, line -> { });

        // A Redis of the test's own: one test kills it.
        redisServer = LocalRedis.start(dir.resolve("redis"));
        redisClient = RedisClient.create(RedisURI.create(redisServer.url()));
        StatefulRedisConnection<String, String> connection = redisClient.connect();
        redis = connection.sync();

        layout = new ViewLayout(UniqueNames.redisPrefix("it-gw"));
        Map<String, String> settings = new LinkedHashMap<>(Map.of(
                "kafka.bootstrap", stack.kafkaBootstrap(),
                "schema-registry.url", stack.schemaRegistryUrl(),
                "redis.url", redisServer.url(),
                "topics.prefix", topics,
                "kafka.group-id", UniqueNames.topic(topics + "job"),
                "kafka.starting-offsets", "earliest",
                "view.key-prefix", layout.prefix(),
                "job.checkpoint-dir", dir.resolve("checkpoints").toUri().toString()));
        settings.putAll(Map.of("engine.suspect-after", "2 s", "engine.dead-after", "5 s", "view.ttl", "5 s"));
        KvRouterJobConfig config = KvRouterJobConfig.from(settings);
        StreamExecutionEnvironment env = KvRouterJob.environment(config, null, new org.apache.flink.configuration.Configuration());
        KvRouterJob.wire(env, config);
        job = env.executeAsync("kv-router behind nginx");

        port = Ports.free();
        NginxGateway gateway = NginxGateway.of(port, upstreams, "127.0.0.1", redisServer.port(), ENGINE.model()).withKeyPrefix(layout.prefix())
                .withChunkTokens(CHUNK).withHold(Duration.ofSeconds(2)).withWorkers(2);
        Path prefix = dir.resolve("nginx");
        nginx = LocalNginx.start(prefix, gateway.render(prefix, LocalNginx.modulesDirectory()), port, System.err);
        await("every engine in the view", () -> redis.hlen(layout.enginesKey()) == engines.size());
    }

    @AfterAll
    void stopTheWholePath() throws Exception {
        if (nginx != null) {
            nginx.close();
        }
        if (job != null) {
            try {
                job.cancel().get(30, TimeUnit.SECONDS);
            } catch (Exception alreadyStopped) {
                // the last test stops it
            }
        }
        if (bridge != null) {
            bridge.close();
        }
        engines.values().forEach(HttpEngine::close);
        if (redisClient != null) {
            redisClient.shutdown();
        }
        if (redisServer != null) {
            redisServer.close();
        }
    }

    @Test
    @Order(1)
    void aReusedPrefixLandsOnTheEngineThatHoldsIt() throws Exception {
        shared = tokens(320);
        Reply first = complete(shared, "c1", false);
        assertThat(first.status).isEqualTo(200);
        holder = first.engine;
        // The holder's blocks come back through its KV events, the bridge, Kafka and the job.
        await("the prompt's blocks in the view on " + holder, () -> holds(holder, shared));
        for (int i = 0; i < 3; i++) {
            int[] next = concat(shared, tokens(40)); // a later turn: the same prefix, more after it
            Reply again = complete(next, "c" + (2 + i), false);
            assertThat(again.route).as("request %d", i).isEqualTo("view");
            assertThat(again.engine).as("the holder").isEqualTo(holder);
            assertThat(again.cachedTokens).as("what the engine reported cached").isGreaterThanOrEqualTo(shared.length / CHUNK * CHUNK);
        }
    }

    @Test
    @Order(2)
    void oneClientsBurstSpreadsOverTheEngines() throws Exception {
        int[] prompt = tokens(320);
        complete(prompt, "burst", false); // held somewhere first: a burst on a held prefix is the point load
        List<CompletableFuture<Reply>> burst = new ArrayList<>();
        java.util.concurrent.ExecutorService clients = java.util.concurrent.Executors.newFixedThreadPool(16);
        Set<String> served = new HashSet<>();
        try {
            for (int i = 0; i < 16; i++) {
                int[] request = concat(prompt, tokens(8));
                burst.add(CompletableFuture.supplyAsync(() -> complete(request, "burst", false, 200), clients));
            }
            for (CompletableFuture<Reply> r : burst) {
                Reply reply = r.get(60, TimeUnit.SECONDS);
                assertThat(reply.status).isEqualTo(200);
                served.add(reply.engine);
            }
        } finally {
            clients.shutdownNow();
        }
        assertThat(served).as("one client's 16 requests at once").hasSizeGreaterThan(1);
    }

    @Test
    @Order(3)
    void aBodyThatIsNotARequestIsRoutedOnLoadSaysWhyAndGetsTheEnginesAnswer() throws Exception {
        Map<String, String> bodies = Map.of(
                "{\"model\":\"" + ENGINE.model() + "\",\"prompt\":[1,2,", "not_json",
                "{\"model\":\"" + ENGINE.model() + "\",\"max_tokens\":4}", "no_prompt",
                "{\"model\":\"" + ENGINE.model() + "\",\"prompt\":[1,\"two\",3]}", "bad_tokens");
        for (Map.Entry<String, String> bad : bodies.entrySet()) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/completions"))
                    .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(bad.getKey())).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.headers().firstValue("X-Kvr-Route")).as(bad.getKey()).hasValue("load_only; " + bad.getValue());
            assertThat(r.statusCode()).as("the engine's answer to %s: %s", bad.getKey(), r.body()).isEqualTo(400);
            assertThat(r.body()).as("with its reason").contains("error");
        }
        assertThat(redis.hlen(layout.reservationsKey())).as("nothing reserved for them: %s", redis.hgetall(layout.reservationsKey()))
                .isZero();
    }

    @Test
    @Order(4)
    void streamedAbortedAndBrokenResponsesAllReleaseTheirReservations() throws Exception {
        Reply streamed = complete(concat(shared, tokens(16)), "s1", true);
        assertThat(streamed.status).isEqualTo(200);
        assertThat(streamed.events).as("a streamed answer, to its last event").isGreaterThan(1);

        // A client that goes away after the first event of a long answer.
        try (InputStream body = streamFrom(concat(shared, tokens(16)), "s2", 2_000).body()) {
            assertThat(firstEvent(body)).startsWith("data:");
        }
        // The holder killed while it streams: the answer breaks after its first bytes (not retried).
        HttpResponse<InputStream> broken = streamFrom(concat(shared, tokens(16)), "s3", 2_000);
        try (InputStream body = broken.body()) {
            assertThat(firstEvent(body)).startsWith("data:");
            holder = answeredBy(broken); // (the holder, by affinity, unless it was full): the engine the next test finds dead
            engines.get(holder).fail(Failure.parse("kill:0@0"));
            body.readAllBytes(); // ends early or in error; either way the request is over
        } catch (java.io.IOException brokenMidStream) {
            // the engine's death reached the client as a broken stream
        }
        // Well within the reservations' TTL (a minute): released by kvr_done, not expired.
        await("every reservation released (kvr_done for each)", DRAIN, () -> redis.hlen(layout.reservationsKey()) == 0);
    }

    @Test
    @Order(5)
    void theKilledEngineGetsNoMoreRequests() throws Exception {
        String killed = holder;
        await("the killed engine dead in the view", () -> {
            String entry = redis.hget(layout.enginesKey(), killed);
            return entry == null || EngineEntry.decode(entry).status().equals("DEAD");
        });
        for (int i = 0; i < 10; i++) {
            Reply r = complete(concat(shared, tokens(16)), "k" + i, false);
            assertThat(r.status).as("request %d served", i).isEqualTo(200);
            assertThat(r.upstreams).as("request %d: no engine tried was the dead one", i).doesNotContain(address(killed));
        }
    }

    @Test
    @Order(6)
    void withRedisKilledEveryRequestIsServedAndRoutingReturnsToTheViewWhenItIsBack() throws Exception {
        redisServer.stop();
        for (int i = 0; i < 5; i++) {
            Reply r = complete(tokens(64), "r" + i, false);
            assertThat(r.status).as("request %d served without Redis", i).isEqualTo(200);
            assertThat(r.route).startsWith("load_only; redis_");
        }
        redisServer.restartEmpty();
        // The job sees an empty Redis, loads its functions and writes the view again; engines come back with their next reports.
        await("routing by the view again", () -> complete(tokens(64), "back", false).route.equals("view"));
    }

    @Test
    @Order(7)
    void withTheJobStoppedTheViewEmptiesAndNginxRoutesOnLoadAndSaysSo() throws Exception {
        job.cancel().get(30, TimeUnit.SECONDS);
        await("the view gone (its keys expire after view.ttl)", () -> !complete(tokens(64), "j", false).route.equals("view"));
        Reply r = complete(tokens(64), "j2", false);
        assertThat(r.status).isEqualTo(200);
        assertThat(r.route).isIn("load_only; no_view", "load_only; no_engine");
        await("no reservation left", DRAIN, () -> redis.hlen(layout.reservationsKey()) == 0);
    }

    // ---- requests --------------------------------------------------------------------------

    /**
     * What a client saw: status, nginx's route, the engines tried (nginx's upstream addresses), the one
     * that answered (its id), and the engine's usage.
     */
    private record Reply(int status, String route, List<String> upstreams, String engine, int cachedTokens, int events) {}

    private Reply complete(int[] prompt, String client, boolean stream) {
        return complete(prompt, client, stream, 20);
    }

    private Reply complete(int[] prompt, String client, boolean stream, int maxTokens) {
        try {
            HttpResponse<String> response = http.send(request(prompt, client, stream, maxTokens), HttpResponse.BodyHandlers.ofString());
            int cached = 0;
            int events = 0;
            if (response.statusCode() == 200) {
                if (stream) {
                    for (String line : response.body().split("\n")) {
                        if (line.startsWith("data: {")) {
                            events++;
                            JsonNode usage = JSON.readTree(line.substring(6)).path("usage");
                            cached = Math.max(cached, usage.path("prompt_tokens_details").path("cached_tokens").asInt(0));
                        }
                    }
                } else {
                    cached = JSON.readTree(response.body()).path("usage").path("prompt_tokens_details").path("cached_tokens").asInt(0);
                }
            }
            return new Reply(response.statusCode(), response.headers().firstValue("X-Kvr-Route").orElse(""),
                    upstreams(response.headers().firstValue("X-Kvr-Upstream").orElse("")), answeredBy(response), cached, events);
        } catch (Exception e) {
            throw new AssertionError("a request through nginx failed: " + e, e);
        }
    }

    /** A streamed request, its body open (the caller reads or drops it). */
    private HttpResponse<InputStream> streamFrom(int[] prompt, String client, int maxTokens) throws Exception {
        HttpResponse<InputStream> response = http.send(request(prompt, client, true, maxTokens), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(response.statusCode()).isEqualTo(200);
        return response;
    }

    /** The engine that answered: the last of the upstreams nginx tried ("" without any). */
    private String answeredBy(HttpResponse<?> response) {
        List<String> tried = upstreams(response.headers().firstValue("X-Kvr-Upstream").orElse(""));
        return tried.isEmpty() ? "" : idByAddress.getOrDefault(tried.get(tried.size() - 1), "?");
    }

    private static String firstEvent(InputStream body) throws java.io.IOException {
        BufferedReader reader = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8));
        String line;
        while ((line = reader.readLine()) != null) {
            if (!line.isBlank()) {
                return line;
            }
        }
        return "";
    }

    private HttpRequest request(int[] prompt, String client, boolean stream, int maxTokens) {
        StringBuilder body = new StringBuilder("{\"model\":\"").append(ENGINE.model()).append("\",\"max_tokens\":").append(maxTokens)
                .append(",\"stream\":").append(stream).append(",\"prompt\":[");
        for (int i = 0; i < prompt.length; i++) {
            body.append(i == 0 ? "" : ",").append(prompt[i]);
        }
        body.append("]}");
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/completions")).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json").header("X-Client-Id", client)
                .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build();
    }

    /** nginx's $upstream_addr: every engine tried, "a, b" (a retry), "a : b" (another upstream group). */
    private static List<String> upstreams(String header) {
        List<String> out = new ArrayList<>();
        for (String part : header.split("[,:]\\s+")) {
            if (!part.isBlank()) {
                out.add(part.trim());
            }
        }
        return out;
    }

    private String address(String engineId) {
        return "127.0.0.1:" + engines.get(engineId).httpPort();
    }

    // ---- the view ----------------------------------------------------------------------------

    /** Whether the view holds the prompt's first block on the engine (as the job wrote it). */
    private boolean holds(String engineId, int[] prompt) {
        long[] chain = new dev.kvrouter.blocks.CanonicalBlockHasher(CHUNK).chain(ENGINE.model(), null, prompt, List.of());
        String field = redis.hget(layout.groupKey(ViewLayout.tag(chain, 1, ViewLayout.DEFAULT_TAG_DEPTH)), ViewLayout.hex(chain[0]));
        return field != null && field.contains(engineId + "=");
    }

    private int[] tokens(int n) {
        return random.ints(n, 1, 30_000).toArray();
    }

    private static int[] concat(int[] a, int[] b) {
        int[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        await(what, WAIT, condition);
    }

    private static void await(String what, Duration within, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            boolean met;
            try {
                met = condition.getAsBoolean();
            } catch (RuntimeException notYet) {
                met = false; // Redis restarting, a request refused on the way
            }
            if (met) {
                return;
            }
            assertThat(System.nanoTime()).as("%s within %s", what, within).isLessThan(deadline);
            Thread.sleep(200);
        }
    }
}
