package dev.kvrouter.httpfleet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kvrouter.sim.workload.SimRequest;
import dev.kvrouter.sim.workload.Workload;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Sends a workload's requests to OpenAI-compatible endpoints (balancers, or one engine) at their
 * arrival times on the wall clock, as clients would: {@code /v1/completions} with the prompt as
 * token ids, streamed with {@code stream_options.include_usage}, the client id and prefix class in
 * headers. Per request it records when the first event came (time to first token, as the client
 * sees it), the cached tokens the engine reported, and which upstream answered (the balancer's
 * {@code X-Kvr-Upstream} header, when it sets one).
 *
 * <p>Bounded: at most {@code maxInFlight} requests at once (a request past it waits, and its wait is
 * in its time to first token, as a client's would be); each request ends within {@code timeout}.
 */
public final class LoadGenerator {

    /**
     * Where and how to send. With several targets (balancers side by side), request {@code seq} goes to
     * target {@code seq mod n}: each balancer sees a share of every client, as behind a layer-4 spreader.
     */
    public record Settings(List<URI> targets, String model, String clientHeader, String classHeader, int maxInFlight, Duration timeout) {
        public Settings {
            targets = List.copyOf(targets);
            if (targets.isEmpty()) {
                throw new IllegalArgumentException("at least one target");
            }
            if (maxInFlight < 1) {
                throw new IllegalArgumentException("maxInFlight must be at least 1, got " + maxInFlight);
            }
        }

        public Settings(URI target, String model, String clientHeader, String classHeader, int maxInFlight, Duration timeout) {
            this(List.of(target), model, clientHeader, classHeader, maxInFlight, timeout);
        }
    }

    /**
     * One request as its client saw it.
     *
     * @param status        the HTTP status; 0 when no answer came (connection refused, timeout)
     * @param ttftMs        from its arrival time to the first event (-1 without one)
     * @param cachedTokens  the engine's {@code prompt_tokens_details.cached_tokens} (-1 when not reported)
     * @param upstream      the balancer's {@code X-Kvr-Upstream} header ("" without one): nginx's {@code $upstream_addr}, every
     *                      engine tried, the one that answered last ({@code "a, b"}: a failed, b answered)
     * @param route         the balancer's {@code X-Kvr-Route} header ("" without one)
     */
    public record Result(long seq, String requestClass, int status, double ttftMs, double totalMs, int promptTokens, int cachedTokens,
                         String upstream, String route) {
        public boolean ok() {
            return status == 200 && ttftMs >= 0;
        }

        /** The upstream that answered: the last one tried ("" without one). */
        public String answeredBy() {
            int comma = upstream.lastIndexOf(',');
            return comma < 0 ? upstream.strip() : upstream.substring(comma + 1).strip();
        }
    }

    static final String UPSTREAM_HEADER = "X-Kvr-Upstream";
    static final String ROUTE_HEADER = "X-Kvr-Route";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Settings settings;

    public LoadGenerator(Settings settings) {
        this.settings = settings;
    }

    /** Sends every request of the workload on time and returns once each has ended, in arrival order. */
    public List<Result> run(Workload workload) throws InterruptedException {
        ExecutorService io = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "load-generator-io");
            t.setDaemon(true);
            return t;
        });
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(settings.timeout()).executor(io).build();
        Semaphore inFlight = new Semaphore(settings.maxInFlight());
        List<CompletableFuture<Result>> answers = new ArrayList<>();
        long startNanos = System.nanoTime();
        try {
            for (Iterator<SimRequest> it = workload.requests(); it.hasNext(); ) {
                SimRequest r = it.next();
                long dueNanos = startNanos + (long) (r.arrivalMs() * 1e6);
                long sleepNanos = dueNanos - System.nanoTime();
                if (sleepNanos > 0) {
                    TimeUnit.NANOSECONDS.sleep(sleepNanos);
                }
                inFlight.acquire();
                answers.add(send(client, r, dueNanos).whenComplete((result, error) -> inFlight.release()));
            }
            List<Result> results = new ArrayList<>(answers.size());
            for (CompletableFuture<Result> a : answers) {
                results.add(a.join());
            }
            return results;
        } finally {
            io.shutdownNow();
        }
    }

    private CompletableFuture<Result> send(HttpClient client, SimRequest r, long arrivalNanos) {
        int[] tokens = r.prompt().tokens();
        StringBuilder body = new StringBuilder(tokens.length * 6 + 160);
        body.append("{\"model\":").append(quote(settings.model())).append(",\"prompt\":[");
        for (int i = 0; i < tokens.length; i++) {
            if (i > 0) {
                body.append(',');
            }
            body.append(tokens[i]);
        }
        body.append("],\"max_tokens\":").append(Math.max(1, r.outputTokens()))
                .append(",\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
        URI target = settings.targets().get((int) Math.floorMod(r.seq(), (long) settings.targets().size()));
        HttpRequest.Builder request = HttpRequest.newBuilder(target.resolve("/v1/completions")).timeout(settings.timeout())
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body.toString()));
        if (r.clientId() != null && !r.clientId().isEmpty()) {
            request.header(settings.clientHeader(), r.clientId());
        }
        if (r.requestClass() != null && !r.requestClass().isEmpty()) {
            request.header(settings.classHeader(), r.requestClass());
        }
        Events events = new Events();
        return client.sendAsync(request.build(), HttpResponse.BodyHandlers.fromLineSubscriber(events, e -> e, "\n"))
                .orTimeout(settings.timeout().toMillis(), TimeUnit.MILLISECONDS)
                .handle((response, error) -> {
                    double totalMs = (System.nanoTime() - arrivalNanos) / 1e6;
                    if (response == null) {
                        return new Result(r.seq(), r.requestClass(), 0, -1, totalMs, tokens.length, -1, "", "");
                    }
                    double ttftMs = events.firstNanos == 0 ? -1 : (events.firstNanos - arrivalNanos) / 1e6;
                    return new Result(r.seq(), r.requestClass(), response.statusCode(), response.statusCode() == 200 ? ttftMs : -1, totalMs,
                            tokens.length, events.cachedTokens, response.headers().firstValue(UPSTREAM_HEADER).orElse(""),
                            response.headers().firstValue(ROUTE_HEADER).orElse(""));
                });
    }

    private static String quote(String s) {
        try {
            return JSON.writeValueAsString(s);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException(e);
        }
    }

    /** The stream's events as they arrive: when the first came, and the usage chunk's cached tokens. */
    private static final class Events implements Flow.Subscriber<String> {
        volatile long firstNanos;
        volatile int cachedTokens = -1;

        @Override
        public void onSubscribe(Flow.Subscription subscription) {
            subscription.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(String line) {
            if (!line.startsWith("data: ")) {
                return;
            }
            if (firstNanos == 0) {
                firstNanos = System.nanoTime();
            }
            if (line.contains("\"usage\"")) {
                try {
                    JsonNode usage = JSON.readTree(line.substring(6)).path("usage");
                    if (usage.has("prompt_tokens_details")) {
                        cachedTokens = usage.path("prompt_tokens_details").path("cached_tokens").asInt(-1);
                    }
                } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                    // not the usage chunk after all: it keeps -1
                }
            }
        }

        @Override
        public void onError(Throwable throwable) {}

        @Override
        public void onComplete() {}
    }
}
