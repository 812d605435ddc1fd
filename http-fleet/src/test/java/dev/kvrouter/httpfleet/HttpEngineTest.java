package dev.kvrouter.httpfleet;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kvrouter.bridge.EngineLoads;
import dev.kvrouter.bridge.EngineSpec;
import dev.kvrouter.bridge.KvEventDecoder;
import dev.kvrouter.bridge.PrometheusText;
import dev.kvrouter.bridge.VllmReplayClient;
import dev.kvrouter.events.BlockStored;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.EngineRole;
import dev.kvrouter.sim.engine.EngineConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * One engine on loopback, spoken to as a balancer and the bridge would: OpenAI HTTP (whole and
 * streamed answers, usage with cached tokens, refusals), the KV events read with the bridge's own
 * decoder (live and replayed), and the metrics page read with the bridge's own parser.
 */
class HttpEngineTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WAIT = Duration.ofSeconds(20);
    /** 256 blocks of 16 tokens; 20 000 prefill tokens/s, 1 000 decode tokens/s: a 640-token prompt takes ~32 ms. */
    private static final EngineConfig CONFIG = EngineConfig.defaults().withCapacity(256).withRates(20_000, 1_000).withMaxRunning(4);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(WAIT).build();
    private final ZContext zmq = new ZContext(1);
    private HttpEngine engine;

    @BeforeEach
    void start() throws Exception {
        engine = HttpEngine.start("e-test", CONFIG);
    }

    @AfterEach
    void stop() {
        engine.close();
        zmq.close();
    }

    @Test
    void aPromptSentTwiceIsCachedTheSecondTimeAndItsBlocksArePublishedAsVllmDoes() throws Exception {
        // A SUB connects asynchronously: probe with fresh prompts until a batch arrives, then drain. A
        // fresh jeromq connection can stall before its handshake and never deliver (the bridge re-creates
        // such sockets): after 10 probes without a batch the socket is made again.
        ZMQ.Socket sub = null;
        boolean connected = false;
        for (int attempt = 0; attempt < 60 && !connected; attempt++) {
            if (attempt % 10 == 0) {
                if (sub != null) {
                    sub.close();
                }
                sub = zmq.createSocket(SocketType.SUB);
                sub.setLinger(0);
                sub.subscribe(new byte[0]);
                sub.connect("tcp://127.0.0.1:" + engine.eventsPort());
            }
            int base = 100_000 + attempt * 64;
            complete(body(IntStream.range(base, base + 32).toArray(), false, 1));
            connected = VllmReplayClient.receive(sub, Duration.ofMillis(200)) != null;
        }
        assertThat(connected).as("a KV event batch within 60 probes on up to 6 sockets").isTrue();
        while (VllmReplayClient.receive(sub, Duration.ofMillis(200)) != null) {
            // the probes' batches
        }

        // 168 full blocks and 5 tokens: two chunks of prefill (2 048 tokens a chunk), so two BlockStored events
        int[] prompt = IntStream.range(0, 2_688 + 5).map(i -> 1_000 + i).toArray();
        JsonNode first = complete(body(prompt, false, 8));
        assertThat(first.path("usage").path("prompt_tokens").asInt()).isEqualTo(2_693);
        assertThat(first.path("usage").path("completion_tokens").asInt()).isEqualTo(8);
        assertThat(first.path("usage").path("prompt_tokens_details").path("cached_tokens").asInt()).isZero();
        assertThat(first.path("choices").get(0).path("finish_reason").asText()).isEqualTo("length");

        JsonNode again = complete(body(prompt, false, 8));
        assertThat(again.path("usage").path("prompt_tokens_details").path("cached_tokens").asInt()).as("every full block cached").isEqualTo(2_688);

        // What was published reads with the bridge's decoder: 168 blocks of 16 of the prompt's tokens, the second run chained to the first.
        List<BlockStored> stored = new ArrayList<>();
        for (List<byte[]> f = VllmReplayClient.receive(sub, Duration.ofMillis(1_000)); f != null; f = VllmReplayClient.receive(sub, Duration.ofMillis(200))) {
            assertThat(f.size()).isEqualTo(3);
            for (Object e : new KvEventDecoder().decode(f.get(2)).events()) {
                if (e instanceof BlockStored s) {
                    stored.add(s);
                }
            }
        }
        List<Integer> tokens = stored.stream().flatMap(s -> s.getTokenIds().stream()).collect(Collectors.toList());
        assertThat(tokens).containsExactlyElementsOf(IntStream.of(prompt).limit(2_688).boxed().toList());
        assertThat(stored).allSatisfy(s -> assertThat(s.getBlockSize()).isEqualTo(16));
        assertThat(stored).hasSize(2);
        assertThat(stored.get(0).getParentBlockHash()).isNull();
        assertThat(stored.get(1).getParentBlockHash()).isEqualTo(last(stored.get(0).getBlockHashes()));

        // Replay from sequence 0 gives the same batches again, then the end marker (-1, empty); the client
        // asks again on a new socket when a fresh jeromq connection stalls before its handshake.
        List<List<byte[]>> answer = VllmReplayClient.replay(zmq, "tcp://127.0.0.1:" + engine.replayPort(), 0, Duration.ofMillis(2_000));
        int replayed = 0;
        long lastSeq = Long.MIN_VALUE;
        for (List<byte[]> f : answer) {
            assertThat(f.size()).isEqualTo(3);
            assertThat(f.get(0)).isEmpty();
            long seq = ByteBuffer.wrap(f.get(1)).getLong();
            if (seq == -1) {
                assertThat(f.get(2)).isEmpty();
                break;
            }
            assertThat(seq).isGreaterThan(lastSeq);
            new KvEventDecoder().decode(f.get(2));
            lastSeq = seq;
            replayed++;
        }
        assertThat(replayed).isPositive();
    }

    @Test
    void aStreamedAnswerSendsItsFirstEventThenTheRestUsageAndDone() throws Exception {
        int[] prompt = IntStream.range(0, 100).toArray();
        String body = body(prompt, true, 5).replace("\"stream\":true", "\"stream\":true,\"stream_options\":{\"include_usage\":true}");
        HttpResponse<java.util.stream.Stream<String>> r = http.send(post("/v1/completions", body), HttpResponse.BodyHandlers.ofLines());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("text/event-stream");
        List<String> data = r.body().filter(l -> l.startsWith("data: ")).map(l -> l.substring(6)).toList();
        assertThat(data).hasSize(4).last().isEqualTo("[DONE]");
        assertThat(JSON.readTree(data.get(0)).path("choices").get(0).path("finish_reason").isNull()).isTrue();
        assertThat(JSON.readTree(data.get(1)).path("choices").get(0).path("finish_reason").asText()).isEqualTo("length");
        JsonNode usage = JSON.readTree(data.get(2));
        assertThat(usage.path("choices")).isEmpty();
        assertThat(usage.path("usage").path("prompt_tokens").asInt()).isEqualTo(100);

        // A chat request, streamed without usage: the role first, as vLLM sends it, then chat chunks, and no usage chunk.
        String chat = "{\"model\":\"" + CONFIG.model() + "\",\"stream\":true,\"max_tokens\":3,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}";
        List<String> chunks = http.send(post("/v1/chat/completions", chat), HttpResponse.BodyHandlers.ofLines()).body()
                .filter(l -> l.startsWith("data: ")).map(l -> l.substring(6)).toList();
        assertThat(chunks).hasSize(4).last().isEqualTo("[DONE]");
        assertThat(JSON.readTree(chunks.get(0)).path("object").asText()).isEqualTo("chat.completion.chunk");
        assertThat(JSON.readTree(chunks.get(0)).path("choices").get(0).path("delta").path("role").asText()).isEqualTo("assistant");
        assertThat(JSON.readTree(chunks.get(1)).path("choices").get(0).path("delta").path("content").asText()).isEqualTo("a");
    }

    @Test
    void whatTheEngineCannotServeIsRefusedWithTheStatusVllmGives() throws Exception {
        assertThat(http.send(post("/v1/completions", "{\"model\":\"other\",\"prompt\":[1,2]}"), HttpResponse.BodyHandlers.ofString()).statusCode())
                .isEqualTo(404);
        HttpResponse<String> notJson = http.send(post("/v1/completions", "{prompt"), HttpResponse.BodyHandlers.ofString());
        assertThat(notJson.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(notJson.body()).path("error").path("message").asText()).contains("not JSON");
        assertThat(http.send(post("/v1/completions", "{\"prompt\":[[1,2],[3]]}"), HttpResponse.BodyHandlers.ofString()).statusCode())
                .isEqualTo(400);
        // A prompt longer than the whole KV cache (256 blocks) is refused, as vLLM refuses a prompt over its context.
        HttpResponse<String> tooLong = http.send(post("/v1/completions", body(IntStream.range(0, 256 * 16 + 16).toArray(), false, 1)),
                HttpResponse.BodyHandlers.ofString());
        assertThat(tooLong.statusCode()).isEqualTo(400);
        assertThat(tooLong.body()).contains("more KV blocks than the engine has");
        // Text is one token per UTF-8 byte.
        JsonNode text = complete("{\"prompt\":\"héllo\",\"max_tokens\":2}");
        assertThat(text.path("usage").path("prompt_tokens").asInt()).isEqualTo(6);
    }

    @Test
    void theMetricsPageReadsAsTheEnginesLoadWithTheBridgesParser() throws Exception {
        complete(body(IntStream.range(0, 64).toArray(), false, 2));
        Thread.sleep(3 * HttpEngine.LOAD_REFRESH_MS); // the page shows the load of the last refresh
        String page = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + engine.httpPort() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        EngineSpec spec = new EngineSpec("e-test", CONFIG.model(), "tcp://127.0.0.1:" + engine.eventsPort(), null,
                "http://127.0.0.1:" + engine.httpPort() + "/metrics", "", 1, 0, EngineRole.BOTH, 0);
        List<EngineLoad> loads = EngineLoads.reports(spec, PrometheusText.parse(page), 0, 100);
        assertThat(loads).singleElement().satisfies(l -> {
            assertThat(l.getKvBlocksCapacity()).isEqualTo(256);
            assertThat(l.getRunning()).isZero();
            assertThat(l.getWaiting()).isZero();
            assertThat(l.getKvBlocksUsed()).isZero(); // nothing running: nothing pinned
        });
        assertThat(engine.bridgeEntry()).contains("events: tcp://127.0.0.1:" + engine.eventsPort(), "max-running: 4");
    }

    @Test
    void aKilledEngineAnswers503AndItsMetricsPageFailsAsItsServerWould() throws Exception {
        java.util.concurrent.atomic.AtomicInteger firsts = new java.util.concurrent.atomic.AtomicInteger();
        engine.onFirstRequest(firsts::incrementAndGet);
        complete(body(IntStream.range(0, 32).toArray(), false, 1));
        complete(body(IntStream.range(0, 32).toArray(), false, 1));
        assertThat(firsts).as("told once").hasValue(1);
        engine.fail(dev.kvrouter.sim.engine.Failure.parse("kill:0@0"));
        HttpResponse<String> after = null;
        for (int i = 0; i < 50 && (after == null || after.statusCode() == 200); i++) {
            after = http.send(post("/v1/completions", body(IntStream.range(0, 32).toArray(), false, 1)), HttpResponse.BodyHandlers.ofString());
        }
        assertThat(after.statusCode()).isEqualTo(503);
        HttpRequest metrics = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + engine.httpPort() + "/metrics")).build();
        int status = 200;
        for (int i = 0; i < 50 && status == 200; i++) {
            status = http.send(metrics, HttpResponse.BodyHandlers.ofString()).statusCode();
            Thread.sleep(20);
        }
        assertThat(status).isEqualTo(503);
    }

    // --- helpers --------------------------------------------------------------------------------

    private String body(int[] prompt, boolean stream, int maxTokens) {
        return "{\"model\":\"" + CONFIG.model() + "\",\"prompt\":" + IntStream.of(prompt).mapToObj(Integer::toString)
                .collect(Collectors.joining(",", "[", "]")) + ",\"max_tokens\":" + maxTokens + ",\"stream\":" + stream + "}";
    }

    private HttpRequest post(String path, String body) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + engine.httpPort() + path)).timeout(WAIT)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    private JsonNode complete(String body) throws Exception {
        HttpResponse<String> r = http.send(post("/v1/completions", body), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    private static ByteBuffer last(List<ByteBuffer> hashes) {
        return hashes.get(hashes.size() - 1);
    }
}
