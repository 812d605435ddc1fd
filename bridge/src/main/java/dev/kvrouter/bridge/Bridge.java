package dev.kvrouter.bridge;

import com.sun.net.httpserver.HttpServer;
import dev.kvrouter.common.TopicNames;
import dev.kvrouter.topics.KafkaClients;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.ZContext;

/**
 * The running bridge: a subscription per engine of the engines file, a metrics scraper, one Kafka
 * outbox, a reporter that logs {@link BridgeMetrics} every report.interval, and a watcher that re-reads
 * the engines file every engines.reload-interval and (re)subscribes only the engines that were added,
 * removed or changed. An engines file that turns invalid is reported and the running set is kept.
 */
public final class Bridge implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Bridge.class);

    private final BridgeConfig config;
    private final BridgeMetrics metrics = new BridgeMetrics();
    private final ZContext zmq;
    private final boolean ownsZmq;
    private final KafkaOutbox outbox;
    private final LoadScraper scraper;
    private final Map<String, EngineSubscription> subscriptions = new LinkedHashMap<>();
    private final ScheduledExecutorService housekeeping;
    private final Consumer<String> reports;
    private String appliedFile;
    private BridgeMetrics.Snapshot lastReport;
    /** The /metrics endpoint; null without prometheus.listen. */
    private HttpServer metricsServer;
    private java.util.concurrent.ExecutorService metricsExecutor;

    private Bridge(BridgeConfig config, Consumer<String> reports, ZContext shared) {
        this.config = config;
        this.reports = reports;
        this.zmq = shared != null ? shared : new ZContext();
        this.ownsZmq = shared == null;
        this.outbox = new KafkaOutbox(config, metrics);
        this.scraper = new LoadScraper(config, outbox, metrics);
        this.housekeeping = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "kvr-bridge-housekeeping");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Starts the bridge on the engines file of {@code config}.
     *
     * @throws InvalidBridgeConfigException when the engines file is invalid at start (every problem listed)
     */
    public static Bridge start(BridgeConfig config) {
        return start(config, line -> LOG.info(line));
    }

    /** As {@link #start(BridgeConfig)}, with the periodic metrics line going to {@code reports} instead of the log. */
    public static Bridge start(BridgeConfig config, Consumer<String> reports) {
        return start(config, reports, null);
    }

    /**
     * As {@link #start(BridgeConfig, Consumer)} on a ZMQ context the caller owns (and closes). Tests run
     * their stand-in engines on the bridge's context: jeromq 0.6.0 can stall a connection between two
     * contexts (two IO threads) of one JVM before its handshake, which would make them flaky.
     */
    static Bridge start(BridgeConfig config, Consumer<String> reports, ZContext shared) {
        String text = read(config);
        Map<String, EngineSpec> engines = EngineFleet.parse(text, config.enginesFile().toString());
        Bridge bridge = new Bridge(config, reports, shared);
        try {
            bridge.serveMetrics();
        } catch (RuntimeException e) {
            bridge.close();
            throw e;
        }
        bridge.apply(engines);
        bridge.appliedFile = text;
        bridge.lastReport = bridge.metrics.snapshot();
        long reload = config.reloadInterval().toMillis();
        bridge.housekeeping.scheduleWithFixedDelay(bridge::reloadIfChanged, reload, reload, TimeUnit.MILLISECONDS);
        long report = config.reportInterval().toMillis();
        bridge.housekeeping.scheduleAtFixedRate(bridge::report, report, report, TimeUnit.MILLISECONDS);
        return bridge;
    }

    /** With prometheus.listen set: {@code GET /metrics} answers the per-engine series, from one daemon thread. */
    private void serveMetrics() {
        if (config.prometheusListen().isEmpty()) {
            return;
        }
        String listen = config.prometheusListen();
        int colon = listen.lastIndexOf(':');
        InetSocketAddress address = new InetSocketAddress(listen.substring(0, colon), Integer.parseInt(listen.substring(colon + 1)));
        try {
            metricsServer = HttpServer.create(address, 16);
        } catch (IOException e) {
            throw new IllegalStateException("cannot serve metrics on " + listen + " (prometheus.listen): " + e.getMessage(), e);
        }
        metricsServer.createContext("/metrics", exchange -> {
            byte[] body = metrics.scrape().getBytes(java.nio.charset.StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
            exchange.sendResponseHeaders(200, body.length);
            try (var out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        metricsExecutor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "kvr-bridge-metrics");
            t.setDaemon(true);
            return t;
        });
        metricsServer.setExecutor(metricsExecutor);
        metricsServer.start();
        LOG.info("metrics for Prometheus: http://{}/metrics", listen);
    }

    private static String read(BridgeConfig config) {
        try {
            return Files.readString(config.enginesFile());
        } catch (IOException e) {
            throw new InvalidBridgeConfigException(List.of(config.enginesFile() + ": cannot read: " + e.getMessage()));
        }
    }

    /**
     * Checks that Kafka answers and has the three topics the bridge writes, so a missing
     * {@code kvr topics apply} is an error at start rather than send errors later.
     *
     * @throws IllegalStateException naming what is missing and what to run
     */
    public static void checkTopics(BridgeConfig config, Duration timeout) {
        List<String> topics = List.of(config.topic(TopicNames.KV_EVENTS), config.topic(TopicNames.ENGINE_LOAD), config.topic(TopicNames.DEAD_LETTER));
        // The producer's own connection settings (the client config's, and security given as producer.*
        // overrides) reach the brokers the same way for this check.
        Map<String, Object> admin = KafkaClients.config(config.client(), Map.of());
        config.producerOverrides().forEach((k, v) -> {
            if (k.startsWith("security.") || k.startsWith("sasl.") || k.startsWith("ssl.")) {
                admin.put(k, v);
            }
        });
        admin.putAll(Map.of("bootstrap.servers", config.kafkaBootstrap(), "default.api.timeout.ms", (int) timeout.toMillis(),
                "request.timeout.ms", (int) timeout.toMillis()));
        try (Admin kafka = Admin.create(admin)) {
            Set<String> existing = kafka.listTopics().names().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            List<String> missing = topics.stream().filter(t -> !existing.contains(t)).toList();
            if (!missing.isEmpty()) {
                throw new IllegalStateException("Kafka at " + config.kafkaBootstrap() + " has no topic " + String.join(", ", missing)
                        + ": create them with './kvr topics apply" + (config.topicPrefix().isEmpty() ? "" : " --prefix " + config.topicPrefix()) + "'");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while checking Kafka's topics", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("cannot check the topics: " + KafkaClients.explain(config.kafkaBootstrap(), e.getCause()), e);
        } catch (TimeoutException e) {
            throw new IllegalStateException("cannot reach Kafka at " + config.kafkaBootstrap() + " within " + timeout.toSeconds()
                    + " s to check its topics; a cluster that requires TLS or SASL does not answer a client without them:"
                    + " set security.protocol in the client config (--client-config FILE or $KVR_CLIENT_CONFIG)", e);
        }
    }

    /** Makes the subscriptions match {@code engines}: new ones start, removed ones stop, changed ones restart; the rest run on. */
    public synchronized void apply(Map<String, EngineSpec> engines) {
        for (var it = subscriptions.entrySet().iterator(); it.hasNext(); ) {
            var entry = it.next();
            EngineSpec wanted = engines.get(entry.getKey());
            if (!entry.getValue().spec().equals(wanted)) {
                scraper.stop(entry.getKey());
                entry.getValue().close();
                it.remove();
                if (wanted == null) {
                    metrics.forget(entry.getKey());
                }
                LOG.info("engine {}: {}", entry.getKey(), wanted == null ? "removed" : "changed, resubscribing");
            }
        }
        for (EngineSpec spec : engines.values()) {
            if (!subscriptions.containsKey(spec.id())) {
                metrics.follow(spec.id());
                subscriptions.put(spec.id(), new EngineSubscription(spec, config, zmq, outbox, metrics).start());
                scraper.start(spec);
            }
        }
        metrics.subscriptions = subscriptions.values().stream().mapToInt(s -> s.spec().dataParallelSize()).sum();
    }

    private void reloadIfChanged() {
        try {
            String text = read(config);
            if (Objects.equals(text, appliedFile)) {
                return;
            }
            appliedFile = text;
            Map<String, EngineSpec> engines = EngineFleet.parse(text, config.enginesFile().toString());
            LOG.info("engines file changed: {} engine(s)", engines.size());
            apply(engines);
        } catch (InvalidBridgeConfigException e) {
            LOG.error("engines file not applied, the running engines stay as they are: {}", e.getMessage());
        } catch (RuntimeException e) {
            LOG.error("engines file reload failed; the running engines stay as they are", e);
        }
    }

    private void report() {
        BridgeMetrics.Snapshot now = metrics.snapshot();
        reports.accept("bridge: " + now.describeSince(lastReport));
        lastReport = now;
        metrics.maxAckLatencyMs.set(0);
    }

    public BridgeConfig config() {
        return config;
    }

    public BridgeMetrics.Snapshot metrics() {
        return metrics.snapshot();
    }

    /** The engines followed now, with their settings. */
    public synchronized Map<String, EngineSpec> engines() {
        Map<String, EngineSpec> out = new LinkedHashMap<>();
        subscriptions.forEach((id, s) -> out.put(id, s.spec()));
        return out;
    }

    /** The subscription object of an engine (null when not followed): its identity shows whether a reload restarted it. */
    synchronized Object subscription(String engineId) {
        return subscriptions.get(engineId);
    }

    /** Waits until everything handed to Kafka so far is acknowledged; for tests and the benchmark. */
    public void flush() {
        outbox.flush();
    }

    @Override
    public synchronized void close() {
        housekeeping.shutdownNow();
        if (metricsServer != null) {
            metricsServer.stop(0);
            metricsExecutor.shutdownNow();
        }
        scraper.close();
        subscriptions.values().forEach(EngineSubscription::close);
        subscriptions.clear();
        outbox.close();
        if (ownsZmq) {
            zmq.close();
        }
        reports.accept("bridge stopped: " + metrics.snapshot().describeSince(lastReport == null ? metrics.snapshot() : lastReport));
    }
}
