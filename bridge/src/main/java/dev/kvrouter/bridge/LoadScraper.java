package dev.kvrouter.bridge;

import dev.kvrouter.events.EngineLoad;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Scrapes each engine's Prometheus endpoint every metrics.scrape-interval into {@link EngineLoad}
 * reports (the job's heartbeats). A scrape that fails sends nothing: a missing heartbeat is the
 * signal the job acts on. At most one scrape per engine is in flight; a slow endpoint skips ticks.
 */
final class LoadScraper implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LoadScraper.class);

    private final BridgeConfig config;
    private final KafkaOutbox outbox;
    private final BridgeMetrics metrics;
    /** The largest metrics page read (vLLM's is a few hundred KiB); a larger one is a failed scrape. */
    static final int MAX_PAGE_BYTES = 8 << 20;

    private final HttpClient http;
    private final ScheduledExecutorService timer;
    private final Map<String, ScheduledFuture<?>> scheduled = new ConcurrentHashMap<>();

    LoadScraper(BridgeConfig config, KafkaOutbox outbox, BridgeMetrics metrics) {
        this.config = config;
        this.outbox = outbox;
        this.metrics = metrics;
        this.http = HttpClient.newBuilder().connectTimeout(config.scrapeTimeout()).build();
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "kvr-bridge-scraper");
            t.setDaemon(true);
            return t;
        });
    }

    void start(EngineSpec spec) {
        if (spec.metrics() == null) {
            return;
        }
        AtomicBoolean inFlight = new AtomicBoolean();
        AtomicBoolean failing = new AtomicBoolean();
        long interval = config.scrapeInterval().toMillis();
        scheduled.put(spec.id(), timer.scheduleAtFixedRate(() -> scrape(spec, inFlight, failing), 0, interval, TimeUnit.MILLISECONDS));
    }

    void stop(String engineId) {
        ScheduledFuture<?> task = scheduled.remove(engineId);
        if (task != null) {
            task.cancel(false);
        }
    }

    private void scrape(EngineSpec spec, AtomicBoolean inFlight, AtomicBoolean failing) {
        if (!inFlight.compareAndSet(false, true)) {
            return;
        }
        HttpRequest request = HttpRequest.newBuilder(URI.create(spec.metrics())).timeout(config.scrapeTimeout()).GET().build();
        http.sendAsync(request, BoundedBody.handler(MAX_PAGE_BYTES)).whenComplete((response, error) -> {
            inFlight.set(false);
            if (!scheduled.containsKey(spec.id())) {
                return; // removed while the scrape was under way
            }
            try {
                if (error != null) {
                    Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null
                            ? error.getCause() : error;
                    throw new IllegalStateException(cause.getClass().getSimpleName()
                            + (cause.getMessage() == null ? "" : ": " + cause.getMessage()), cause);
                }
                if (response.statusCode() != 200) {
                    throw new IllegalStateException("HTTP " + response.statusCode());
                }
                for (EngineLoad load : EngineLoads.reports(spec, PrometheusText.parse(response.body()), System.currentTimeMillis(),
                        (int) config.scrapeInterval().toMillis())) {
                    outbox.offer(load);
                }
                if (failing.compareAndSet(true, false)) {
                    LOG.info("engine {}: metrics at {} answer again", spec.id(), spec.metrics());
                }
            } catch (RuntimeException e) {
                metrics.scrapeErrors.increment();
                // Logged when it starts failing, not on every tick.
                if (failing.compareAndSet(false, true)) {
                    LOG.warn("engine {}: cannot scrape {}: {}; no load reports (heartbeats) until it answers", spec.id(),
                            spec.metrics(), e.getMessage());
                }
            }
        });
    }

    @Override
    public void close() {
        scheduled.keySet().forEach(this::stop);
        timer.shutdownNow();
    }
}
