package dev.kvrouter.balancer;

import dev.kvrouter.balancer.KvRouterClient.Pick;
import dev.kvrouter.balancer.KvRouterClient.Source;
import dev.kvrouter.contract.ViewContract;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The balancer client's metrics, as Micrometer meters in the balancer's own registry. Micrometer
 * rather than the Prometheus client: this is a library inside someone else's service, which has a
 * registry already (Spring Boot, Quarkus, Vert.x, Dropwizard all bind one) and exports it where it
 * wants, Prometheus or OTLP; the client adds its meters there instead of a second registry and a
 * second {@code /metrics} endpoint. In Prometheus they read {@code kvr_client_picks_total{reason,detail}},
 * {@code kvr_client_pick_latency_seconds} (a histogram) and {@code kvr_client_fallbacks_total{source}}.
 */
final class ClientMetrics {

    static final String PICKS = "kvr.client.picks";
    static final String PICK_LATENCY = "kvr.client.pick.latency";
    static final String FALLBACKS = "kvr.client.fallbacks";

    private final MeterRegistry registry;
    private final Timer latency;
    /** One counter per reason kvr_pick gives (a dozen at most): looked up once, not per pick. */
    private final Map<String, Counter> picks = new ConcurrentHashMap<>();
    private final Map<Source, Counter> fallbacks = new ConcurrentHashMap<>();

    ClientMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.latency = Timer.builder(PICK_LATENCY)
                .description("One pick, asked to answered: the Redis round trip (two picking client-side), or the fallback")
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(50_000))
                .maximumExpectedValue(Duration.ofSeconds(1))
                .register(registry);
    }

    /** The reason's family in the view's contract (SPILL_BUSY for SPILL_QUEUE): a name it does not know is its own. */
    private static String family(String reason) {
        ViewContract.Reason known = ViewContract.Reason.named(reason);
        return known == null ? reason : known.family().name();
    }

    void picked(Pick pick, long nanos) {
        latency.record(nanos, TimeUnit.NANOSECONDS);
        String reason = Objects.requireNonNullElse(pick.reason(), "NONE");
        picks.computeIfAbsent(reason, r -> Counter.builder(PICKS)
                .description("Picks by the reason kvr_pick gave: its family in reason (AFFINITY, REPLICA, SPILL_BUSY, SPILL_HOT, "
                        + "SPILL_CLIENT_CAP, COLD, NO_AFFINITY_CLASS, FALLBACK_LOAD_ONLY, ...), the reason itself in detail")
                .tag("reason", family(r)).tag("detail", r).register(registry)).increment();
        if (pick.source() != Source.VIEW && pick.source() != Source.NO_ENGINE) {
            fallbacks.computeIfAbsent(pick.source(), s -> Counter.builder(FALLBACKS)
                    .description("Picks routed on load alone: the view too old or missing (FALLBACK_STALE_VIEW), Redis not answering "
                            + "(FALLBACK_REDIS_DOWN), no engine in the view: the configured ones by own count (FALLBACK_NO_ENGINES)")
                    .tag("source", s.name()).register(registry)).increment();
        }
    }
}
