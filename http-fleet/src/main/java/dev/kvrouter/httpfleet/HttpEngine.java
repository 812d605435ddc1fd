package dev.kvrouter.httpfleet;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.OutcomeStatus;
import dev.kvrouter.events.RouteReason;
import dev.kvrouter.sim.VirtualClock;
import dev.kvrouter.sim.engine.Completion;
import dev.kvrouter.sim.engine.EngineConfig;
import dev.kvrouter.sim.engine.Placement;
import dev.kvrouter.sim.engine.SimEngine;
import dev.kvrouter.sim.workload.Prompt;
import dev.kvrouter.sim.workload.SimRequest;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.IdentityHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One simulated engine ({@link SimEngine}: its prefix cache, slots, chunked prefill and decode
 * rates) on the wall clock, behind the interfaces a vLLM server has: OpenAI-compatible
 * {@code /v1/completions} and {@code /v1/chat/completions} (streamed as server-sent events, the
 * first event when the prompt's prefill ends; usage with {@code prompt_tokens_details.cached_tokens}),
 * {@code /metrics} with vLLM's gauge names, {@code /health}, and KV events over ZMQ
 * ({@link KvEventPublisher}). Everything binds to loopback.
 *
 * <p>Threads: one driver thread owns the engine and its clock and runs its events when the wall
 * clock reaches them; HTTP worker threads hand it requests through a bounded queue and wait for the
 * first token and the end. A client that goes away does not abort its request: the engine computes
 * it to the end (vLLM would abort it), which only ever overstates the load a balancer sees.
 */
public final class HttpEngine implements AutoCloseable {

    /** The largest request body read (vLLM has no such limit; a balancer in front bounds it anyway). */
    static final int MAX_BODY_BYTES = 16 << 20;
    /** HTTP worker threads, one per request in flight; past them requests queue (up to MAX_QUEUED) for a thread. */
    static final int MAX_IN_FLIGHT = 512;
    /** Requests handed to the driver and not yet taken: bounded, past it 503. */
    static final int MAX_QUEUED = 4_096;
    /** How often the load the metrics page shows is refreshed. */
    static final int LOAD_REFRESH_MS = 100;
    /** No answer waits longer than this for its engine (a bound, not a figure any run reaches). */
    static final long ANSWER_TIMEOUT_MS = TimeUnit.MINUTES.toMillis(30);
    /** KV event batches kept for replay. */
    static final int REPLAY_BATCHES = 10_000;

    private static final ObjectMapper JSON = new ObjectMapper();

    private record Waiter(CompletableFuture<Void> firstToken, CompletableFuture<Completion> done) {}

    private final String id;
    private final EngineConfig config;
    private final VirtualClock clock;
    private final SimEngine engine;
    private final KvEventPublisher events;
    private final CanonicalBlockHasher hasher;
    private final LinkedBlockingQueue<Runnable> inbox = new LinkedBlockingQueue<>(MAX_QUEUED);
    /** Requests in the engine: touched only on the driver thread. */
    private final Map<Placement, Waiter> waiters = new IdentityHashMap<>();
    private final long startNanos = System.nanoTime();
    private final AtomicLong requests = new AtomicLong();
    private final Thread driver;
    private final HttpServer http;
    private final ThreadPoolExecutor workers;
    private volatile boolean running = true;
    /** The engine's own state as the driver last saw it: a dead engine's metrics page fails, as its server would. */
    private volatile boolean engineUp = true;
    private final java.util.concurrent.atomic.AtomicBoolean firstRequest = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile Runnable onFirstRequest = () -> {};

    private HttpEngine(String id, EngineConfig config, int port) throws IOException {
        this.id = id;
        this.config = config.withHeartbeatMs(LOAD_REFRESH_MS);
        this.clock = new VirtualClock(0, System.currentTimeMillis());
        InetAddress loopback = InetAddress.getLoopbackAddress();
        this.events = new KvEventPublisher(loopback.getHostAddress(), REPLAY_BATCHES);
        this.hasher = new CanonicalBlockHasher(config.blockTokens());
        this.engine = new SimEngine(id, this.config, clock, events, this::completed);
        engine.onFirstToken(this::firstToken);
        engine.startHeartbeats(() -> running);
        this.driver = new Thread(this::drive, "engine-" + id);
        driver.setDaemon(true);
        this.workers = new ThreadPoolExecutor(MAX_IN_FLIGHT, MAX_IN_FLIGHT, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(MAX_QUEUED));
        workers.allowCoreThreadTimeOut(true);
        this.http = HttpServer.create(new InetSocketAddress(loopback, port), 256);
        http.setExecutor(workers);
        http.createContext("/v1/completions", ex -> generate(ex, false));
        http.createContext("/v1/chat/completions", ex -> generate(ex, true));
        http.createContext("/metrics", this::metrics);
        http.createContext("/health", ex -> answer(ex, 200, "text/plain", new byte[0]));
        driver.start();
        http.start();
    }

    /** Starts an engine serving HTTP on a free loopback port. */
    public static HttpEngine start(String id, EngineConfig config) throws IOException {
        return start(id, config, 0);
    }

    /** Starts an engine serving HTTP on this loopback port (0: a free one). */
    public static HttpEngine start(String id, EngineConfig config, int port) throws IOException {
        return new HttpEngine(id, config, port);
    }

    public String id() {
        return id;
    }

    public int httpPort() {
        return http.getAddress().getPort();
    }

    public int eventsPort() {
        return events.eventsPort();
    }

    public int replayPort() {
        return events.replayPort();
    }

    public EngineConfig config() {
        return config;
    }

    /** The engine as the bridge's engines file lists it (one YAML list item). */
    public String bridgeEntry() {
        String host = InetAddress.getLoopbackAddress().getHostAddress();
        return "  - id: " + id + "\n"
                + "    model: " + config.model() + "\n"
                + "    events: tcp://" + host + ":" + eventsPort() + "\n"
                + "    replay: tcp://" + host + ":" + replayPort() + "\n"
                + "    metrics: http://" + host + ":" + httpPort() + "/metrics\n"
                + "    max-running: " + config.maxRunning() + "\n";
    }

    /** Told once, when the first generation request arrives (a run's failures are timed from it). */
    public void onFirstRequest(Runnable r) {
        this.onFirstRequest = r;
    }

    /**
     * A failure of the simulator's kinds, applied now on the driver thread: killed, the engine fails
     * what it holds and every request after with 503 (which nginx retries elsewhere), its metrics page
     * fails and its KV events stop; slowed, it prefills at a fraction of its rate; restarted, it comes
     * back with an empty cache; a gap loses KV event batches.
     */
    public void fail(dev.kvrouter.sim.engine.Failure failure) {
        if (!inbox.offer(() -> failure.applyTo(engine))) {
            throw new IllegalStateException("engine " + id + ": the driver's queue is full; " + failure + " not applied");
        }
    }

    // ---- the driver thread -------------------------------------------------------------------

    private double wallMs() {
        return (System.nanoTime() - startNanos) / 1e6;
    }

    /** Runs the engine's events as the wall clock reaches them, and the requests handed over as they come. */
    private void drive() {
        try {
            while (running) {
                double now = wallMs();
                for (Runnable r = inbox.poll(); r != null; r = inbox.poll()) {
                    clock.at(Math.max(clock.nowMs(), now), r);
                }
                clock.runUntil(now);
                engineUp = engine.up();
                // Sleep until the next event is due (at most 50 ms, so close() is seen), or a request comes.
                long waitMs = (long) Math.max(0, Math.min(clock.nextAtMs() - wallMs(), 50));
                Runnable next = inbox.poll(waitMs, TimeUnit.MILLISECONDS);
                if (next != null) {
                    clock.at(Math.max(clock.nowMs(), wallMs()), next);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // Whatever still waits is told the engine stopped.
        waiters.values().forEach(w -> w.done.completeExceptionally(new IllegalStateException("the engine stopped")));
        waiters.clear();
    }

    private void firstToken(Placement p) {
        Waiter w = waiters.get(p);
        if (w != null) {
            w.firstToken.complete(null);
        }
    }

    private void completed(Completion c) {
        // State clearing: a request leaves the map when it ends, whatever the outcome.
        Waiter w = waiters.remove(c.placement());
        if (w != null) {
            w.done.complete(c);
        }
    }

    // ---- HTTP ------------------------------------------------------------------------------------

    private void generate(HttpExchange ex, boolean chat) throws IOException {
        try (ex) {
            if (!"POST".equals(ex.getRequestMethod())) {
                error(ex, 405, "use POST");
                return;
            }
            byte[] body = readBounded(ex.getRequestBody());
            if (body == null) {
                error(ex, 413, "the request body is over " + MAX_BODY_BYTES + " bytes");
                return;
            }
            OpenAiRequest req;
            try {
                req = OpenAiRequest.parse(chat, body, config.model());
            } catch (OpenAiRequest.Refused e) {
                error(ex, e.status, e.getMessage());
                return;
            }
            if (firstRequest.compareAndSet(false, true)) {
                onFirstRequest.run();
            }
            long n = requests.incrementAndGet();
            String requestId = (chat ? "chatcmpl-" : "cmpl-") + id + "-" + n;
            SimRequest sim = new SimRequest(n, 0, "", "", Prompt.ofTokens(req.promptTokens()), req.maxTokens());
            long[] chain = hasher.chain(config.model(), null, req.promptTokens(), null);
            Placement placement = new Placement(requestId, sim, chain, id, 0, RouteReason.COLD);
            Waiter w = new Waiter(new CompletableFuture<>(), new CompletableFuture<>());
            if (!inbox.offer(() -> {
                waiters.put(placement, w);
                engine.submit(placement);
            })) {
                error(ex, 503, "the engine has " + MAX_QUEUED + " requests not yet taken");
                return;
            }
            if (req.stream()) {
                stream(ex, req, requestId, w);
                return;
            }
            Completion c = await(w.done);
            if (c == null || !c.ok()) {
                failed(ex, c);
                return;
            }
            answer(ex, 200, "application/json", JSON.writeValueAsBytes(whole(req, requestId, c)));
        }
    }

    private void stream(HttpExchange ex, OpenAiRequest req, String requestId, Waiter w) throws IOException {
        // The first event goes out when the prefill ends; a request that fails before it gets a plain error.
        await(CompletableFuture.anyOf(w.firstToken, w.done));
        if (!w.firstToken.isDone()) {
            failed(ex, w.done.getNow(null));
            return;
        }
        ex.getResponseHeaders().set("Content-Type", "text/event-stream");
        ex.getResponseHeaders().set("Cache-Control", "no-cache");
        ex.sendResponseHeaders(200, 0);
        OutputStream out = ex.getResponseBody();
        if (req.chat()) {
            event(out, roleChunk(req, requestId)); // vLLM's first chat chunk names the role
        }
        event(out, chunk(req, requestId, "a", null));
        Completion c = await(w.done);
        if (c == null || !c.ok()) {
            return; // failed after the first byte: the stream just ends, as a dying engine's does
        }
        event(out, chunk(req, requestId, "a".repeat(Math.max(0, req.maxTokens() - 1)), "length"));
        if (req.includeUsage()) {
            ObjectNode usage = chunk(req, requestId, null, null);
            usage.putArray("choices");
            usage.set("usage", usage(req, c));
            event(out, usage);
        }
        out.write("data: [DONE]\n\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    private static void event(OutputStream out, ObjectNode data) throws IOException {
        out.write(("data: " + JSON.writeValueAsString(data) + "\n\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private <T> T await(CompletableFuture<T> f) {
        try {
            return f.get(ANSWER_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (ExecutionException | TimeoutException e) {
            return null;
        }
    }

    private void failed(HttpExchange ex, Completion c) throws IOException {
        if (c != null && c.status() == OutcomeStatus.REJECTED) {
            error(ex, 400, "the prompt needs more KV blocks than the engine has (" + config.capacityBlocks() + ")");
        } else {
            error(ex, 503, "the engine failed the request");
        }
    }

    /**
     * The whole answer, with every field vLLM's {@code model_dump()} writes ({@code null} for what the
     * simulated engine has not: logprobs, token ids, transfer parameters...), in vLLM's order.
     */
    private ObjectNode whole(OpenAiRequest req, String requestId, Completion c) {
        ObjectNode root = head(req, requestId, req.chat() ? "chat.completion" : "text_completion");
        ObjectNode choice = root.putArray("choices").addObject();
        choice.put("index", 0);
        String text = "a".repeat(req.maxTokens());
        if (req.chat()) {
            ObjectNode message = choice.putObject("message");
            message.put("role", "assistant");
            message.put("content", text);
            nulls(message, "refusal", "annotations", "audio", "function_call", "reasoning");
            choice.putNull("logprobs");
            choice.put("finish_reason", "length");
            nulls(choice, "stop_reason", "token_ids", "routed_experts");
        } else {
            choice.put("text", text);
            choice.putNull("logprobs");
            choice.put("finish_reason", "length");
            nulls(choice, "stop_reason", "token_ids", "prompt_logprobs", "prompt_token_ids", "routed_experts");
        }
        nulls(root, "service_tier", "system_fingerprint");
        root.set("usage", usage(req, c));
        if (req.chat()) {
            nulls(root, "prompt_logprobs", "prompt_token_ids", "prompt_text");
        }
        nulls(root, "kv_transfer_params", "ec_transfer_params", "metrics");
        return root;
    }

    /**
     * A streamed chunk of {@code text} (null: the usage chunk's head, without choices), with the fields
     * vLLM's chunks carry ({@code exclude_unset}: those it sets, null ones included).
     */
    private ObjectNode chunk(OpenAiRequest req, String requestId, String text, String finish) {
        ObjectNode root = head(req, requestId, req.chat() ? "chat.completion.chunk" : "text_completion");
        if (text != null) {
            ObjectNode choice = root.putArray("choices").addObject();
            choice.put("index", 0);
            if (req.chat()) {
                choice.putObject("delta").put("content", text);
                choice.putNull("logprobs");
                choice.put("finish_reason", finish);
                if (finish != null) {
                    choice.putNull("stop_reason");
                }
                choice.putNull("token_ids");
            } else {
                choice.put("text", text);
                choice.putNull("logprobs");
                choice.put("finish_reason", finish);
                nulls(choice, "stop_reason", "prompt_token_ids", "token_ids");
            }
        }
        return root;
    }

    /** A streamed chat's first chunk, as vLLM sends it before any content: the role and an empty content. */
    private ObjectNode roleChunk(OpenAiRequest req, String requestId) {
        ObjectNode root = head(req, requestId, "chat.completion.chunk");
        ObjectNode choice = root.putArray("choices").addObject();
        choice.put("index", 0);
        choice.putObject("delta").put("role", "assistant").put("content", "");
        nulls(choice, "logprobs", "finish_reason");
        nulls(root, "prompt_token_ids", "prompt_text");
        return root;
    }

    private static ObjectNode head(OpenAiRequest req, String requestId, String object) {
        ObjectNode root = JSON.createObjectNode();
        root.put("id", requestId);
        root.put("object", object);
        root.put("created", System.currentTimeMillis() / 1000);
        root.put("model", req.model());
        return root;
    }

    private static void nulls(ObjectNode node, String... fields) {
        for (String f : fields) {
            node.putNull(f);
        }
    }

    private static ObjectNode usage(OpenAiRequest req, Completion c) {
        ObjectNode usage = JSON.createObjectNode();
        usage.put("prompt_tokens", req.promptTokens().length);
        usage.put("completion_tokens", req.maxTokens());
        usage.put("total_tokens", req.promptTokens().length + req.maxTokens());
        usage.putObject("prompt_tokens_details").put("cached_tokens", c.cachedTokens());
        return usage;
    }

    /** vLLM's gauges, from the engine's last load (refreshed every {@link #LOAD_REFRESH_MS}). */
    private void metrics(HttpExchange ex) throws IOException {
        try (ex) {
            if (!engineUp) {
                error(ex, 503, "the engine is down");
                return;
            }
            EngineLoad load = events.lastLoad();
            long running = load == null ? 0 : load.getRunning();
            long waiting = load == null ? 0 : load.getWaiting();
            double usage = load == null || load.getKvBlocksCapacity() == 0 ? 0 : (double) load.getKvBlocksUsed() / load.getKvBlocksCapacity();
            String labels = "engine=\"0\",model_name=\"" + config.model() + "\"";
            String page = "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
                    + "# TYPE vllm:num_requests_running gauge\n"
                    + "vllm:num_requests_running{" + labels + "} " + running + ".0\n"
                    + "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n"
                    + "# TYPE vllm:num_requests_waiting gauge\n"
                    + "vllm:num_requests_waiting{" + labels + "} " + waiting + ".0\n"
                    + "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n"
                    + "# TYPE vllm:kv_cache_usage_perc gauge\n"
                    + "vllm:kv_cache_usage_perc{" + labels + "} " + String.format(Locale.ROOT, "%.6f", usage) + "\n"
                    + "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n"
                    + "# TYPE vllm:cache_config_info gauge\n"
                    + "vllm:cache_config_info{block_size=\"" + config.blockTokens() + "\",enable_prefix_caching=\"True\",engine=\"0\","
                    + "num_gpu_blocks=\"" + config.capacityBlocks() + "\"} 1.0\n";
            answer(ex, 200, "text/plain; version=0.0.4", page.getBytes(StandardCharsets.UTF_8));
        }
    }

    private static byte[] readBounded(InputStream in) throws IOException {
        byte[] body = in.readNBytes(MAX_BODY_BYTES + 1);
        return body.length > MAX_BODY_BYTES ? null : body;
    }

    private static void error(HttpExchange ex, int status, String message) throws IOException {
        ObjectNode root = JSON.createObjectNode();
        ObjectNode error = root.putObject("error");
        error.put("message", message);
        error.put("type", status == 404 ? "NotFoundError" : status >= 500 ? "ServiceUnavailableError" : "BadRequestError");
        error.putNull("param"); // vLLM's ErrorInfo: null unless a parameter is named
        error.put("code", status);
        answer(ex, status, "application/json", JSON.writeValueAsBytes(root));
    }

    private static void answer(HttpExchange ex, int status, String type, byte[] body) throws IOException {
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            ex.getResponseBody().write(body);
        }
    }

    @Override
    public void close() {
        running = false;
        http.stop(0);
        workers.shutdownNow();
        driver.interrupt();
        try {
            driver.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        events.close();
    }
}
