package dev.kvrouter.httpfleet;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kvrouter.bridge.VllmGolden;
import dev.kvrouter.sim.engine.EngineConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The engine's OpenAI-compatible answers against vLLM's (vllm-golden/openai, see its README): every
 * field a vLLM answer has is in ours with the same JSON type, fixed values ({@code object}, the role,
 * the finish reason, the error's type and code) equal, and streams framed as vLLM frames them.
 */
class VllmGoldenOpenAiTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final EngineConfig CONFIG = EngineConfig.defaults().withCapacity(256).withRates(20_000, 1_000).withMaxRunning(4);
    /** Fields whose value, not only its type, must be vLLM's. */
    private static final Set<String> FIXED = Set.of("object", "role", "finish_reason", "type", "code");

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(WAIT).build();
    private HttpEngine engine;

    @BeforeEach
    void start() throws Exception {
        engine = HttpEngine.start("e-golden", CONFIG);
    }

    @AfterEach
    void stop() {
        engine.close();
    }

    @Test
    void aCompletionHasVllmsFields() throws Exception {
        HttpResponse<String> r = post("/v1/completions", completion(32, 5, false));

        assertThat(r.statusCode()).isEqualTo(200);
        assertLike(JSON.readTree(r.body()), golden("completion.json"));
    }

    @Test
    void aChatCompletionHasVllmsFields() throws Exception {
        HttpResponse<String> r = post("/v1/chat/completions", chat(5, false));

        assertThat(r.statusCode()).isEqualTo(200);
        assertLike(JSON.readTree(r.body()), golden("chat-completion.json"));
    }

    @Test
    void aStreamedCompletionIsFramedAndShapedAsVllmsStream() throws Exception {
        List<JsonNode> events = stream("/v1/completions", completion(32, 5, true));

        // Chunks of text, the last with its finish reason, then the usage chunk.
        assertThat(events.size()).isGreaterThanOrEqualTo(3);
        for (JsonNode chunk : events.subList(0, events.size() - 2)) {
            assertLike(chunk, golden("completion-chunk.json"));
        }
        assertLike(events.get(events.size() - 2), golden("completion-final-chunk.json"));
        assertLike(events.get(events.size() - 1), golden("completion-usage-chunk.json"));
    }

    @Test
    void aStreamedChatStartsWithTheRoleAndIsShapedAsVllmsStream() throws Exception {
        List<JsonNode> events = stream("/v1/chat/completions", chat(5, true));

        // The role, chunks of content, the last with its finish reason, then the usage chunk.
        assertThat(events.size()).isGreaterThanOrEqualTo(4);
        assertLike(events.get(0), golden("chat-chunk-role.json"));
        for (JsonNode chunk : events.subList(1, events.size() - 2)) {
            assertLike(chunk, golden("chat-chunk-content.json"));
        }
        assertLike(events.get(events.size() - 2), golden("chat-chunk-finish.json"));
        assertLike(events.get(events.size() - 1), golden("chat-usage-chunk.json"));
    }

    @Test
    void aPromptOverTheContextIsRefusedWithVllmsErrorShape() throws Exception {
        // 256 blocks of 16 tokens: a longer prompt is refused, as vLLM refuses one over its context.
        HttpResponse<String> r = post("/v1/completions", completion(256 * 16 + 16, 1, false));

        assertThat(r.statusCode()).isEqualTo(400);
        assertLike(JSON.readTree(r.body()), golden("error.json"));
    }

    // --- helpers --------------------------------------------------------------------------------

    private static JsonNode golden(String name) throws Exception {
        return JSON.readTree(VllmGolden.text("openai/" + name));
    }

    /**
     * Every field of {@code expected} is in {@code actual} with the same JSON type, fixed values equal;
     * an array is compared by its first element (an empty one must stay empty).
     */
    private static void assertLike(JsonNode actual, JsonNode expected) {
        List<String> differences = new ArrayList<>();
        compare("$", actual, expected, differences);
        assertThat(differences).as("differences from vLLM's answer in %s", actual).isEmpty();
    }

    private static void compare(String path, JsonNode actual, JsonNode expected, List<String> differences) {
        if (actual == null || actual.isMissingNode()) {
            differences.add(path + " is missing");
            return;
        }
        if (!type(actual).equals(type(expected))) {
            differences.add(path + " is " + type(actual) + ", vLLM's is " + type(expected));
            return;
        }
        if (expected.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = expected.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> field = it.next();
                String at = path + "." + field.getKey();
                compare(at, actual.get(field.getKey()), field.getValue(), differences);
                if (FIXED.contains(field.getKey()) && actual.has(field.getKey()) && !actual.get(field.getKey()).equals(field.getValue())) {
                    differences.add(at + " is " + actual.get(field.getKey()) + ", vLLM's is " + field.getValue());
                }
            }
        } else if (expected.isArray()) {
            if (expected.isEmpty() != actual.isEmpty()) {
                differences.add(path + " has " + actual.size() + " element(s), vLLM's " + expected.size());
            } else if (!expected.isEmpty()) {
                compare(path + "[0]", actual.get(0), expected.get(0), differences);
            }
        }
    }

    private static String type(JsonNode n) {
        if (n.isIntegralNumber()) {
            return "integer";
        }
        return n.getNodeType().name().toLowerCase();
    }

    /** The events of a streamed answer, after checking vLLM's framing: only {@code data: } events, each ended by a blank line, {@code [DONE]} last. */
    private List<JsonNode> stream(String path, String body) throws Exception {
        HttpResponse<String> r = post(path, body);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("text/event-stream");
        String text = r.body();
        assertThat(text).matches("(data: [^\n]+\n\n)+").endsWith("data: [DONE]\n\n");
        List<String> data = text.lines().filter(l -> !l.isEmpty()).map(l -> l.substring("data: ".length())).toList();
        List<JsonNode> events = new ArrayList<>();
        for (String d : data.subList(0, data.size() - 1)) {
            events.add(JSON.readTree(d));
        }
        return events;
    }

    private HttpResponse<String> post(String path, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + engine.httpPort() + path)).timeout(WAIT)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static String completion(int promptTokens, int maxTokens, boolean stream) {
        String prompt = IntStream.range(0, promptTokens).mapToObj(t -> Integer.toString(1_000 + t)).collect(Collectors.joining(",", "[", "]"));
        return "{\"model\":\"" + CONFIG.model() + "\",\"prompt\":" + prompt + ",\"max_tokens\":" + maxTokens + streamOptions(stream) + "}";
    }

    private static String chat(int maxTokens, boolean stream) {
        return "{\"model\":\"" + CONFIG.model() + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello.\"}],\"max_tokens\":" + maxTokens
                + streamOptions(stream) + "}";
    }

    private static String streamOptions(boolean stream) {
        return stream ? ",\"stream\":true,\"stream_options\":{\"include_usage\":true}" : "";
    }
}
