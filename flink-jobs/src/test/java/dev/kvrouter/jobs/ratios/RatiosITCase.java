package dev.kvrouter.jobs.ratios;

import static dev.kvrouter.jobs.view.ViewTestSupport.metricSum;
import static dev.kvrouter.jobs.view.ViewTestSupport.scrapeMetrics;
import static dev.kvrouter.jobs.view.ViewTestSupport.OPERATOR_METRIC;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;

import dev.kvrouter.alerts.Alert;
import dev.kvrouter.alerts.AlertKind;
import dev.kvrouter.common.TopicNames;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.events.OutcomeStatus;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RouteReason;
import dev.kvrouter.events.RoutingDecision;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.jobs.view.KvRouterJob;
import dev.kvrouter.jobs.view.ViewTestSupport;
import dev.kvrouter.metrics.ClassRatios;
import dev.kvrouter.metrics.WindowKind;
import dev.kvrouter.stack.Ports;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.LocalStackExtension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Crafted decisions and outcomes through Kafka; the published ratios are exactly the expected ones. */
@ExtendWith(LocalStackExtension.class)
class RatiosITCase {

    /** The cluster's Prometheus reporter: the job's metrics as an operator scrapes them. */
    private static final int METRICS_PORT = Ports.free();

    @RegisterExtension
    static final MiniClusterExtension FLINK = ViewTestSupport.miniCluster(2, KvRouterJob.prometheusReporter(Integer.toString(METRICS_PORT)));

    private static final long WINDOW_MS = 4_000;

    @Test
    void eachRatioIsPublishedExactlyAsCountedByHand(StackAddresses stack) throws Exception {
        String topics = ViewTestSupport.topics(stack, "it-ratios");
        KvRouterJobConfig config = ViewTestSupport.config(stack, topics, stack.redisUrl(),
                "ratios.window", WINDOW_MS + " ms",
                "ratios.sliding-window", 2 * WINDOW_MS + " ms",
                "ratios.slide", WINDOW_MS + " ms",
                "ratios.join-bound", "3 s",
                "ratios.usd-per-million-input", "3.0",
                "ratios.affinity-min-requests", "2");
        StreamExecutionEnvironment env = KvRouterJob.environment(config);
        KvRouterJob.wire(env, config);
        JobClient job = env.executeAsync("ratios");
        try (KafkaProducer<String, Object> producer = ViewTestSupport.producer(stack);
             KafkaConsumer<String, ClassRatios> consumer = consumer(stack, config.kafka().topic(TopicNames.CLASS_RATIOS))) {
            // Warm the pipeline up, then start the measured requests just after a window opens.
            send(producer, config, decision("w1", "warmup", 0), outcome("w1", "e1", 0, 0, 10));
            await(consumer, r -> "warmup".equals(r.getPrefixClass()));
            while (System.currentTimeMillis() % WINDOW_MS < 300 || System.currentTimeMillis() % WINDOW_MS > 800) {
                Thread.sleep(10);
            }
            send(producer, config, decision("a1", "app-a", 4), outcome("a1", "e1", 64, 0, 100));
            send(producer, config, decision("a2", "app-a", 4), outcome("a2", "e1", 32, 0, 200));
            send(producer, config, decision("a3", "app-a", 2), outcome("a3", "e2", 0, 0, 300));
            send(producer, config, decision("a4", "app-a", 0), outcome("a4", "e2", 0, 512, 400));
            producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.ROUTING_DECISIONS), "lost", decision("lost", "app-a", 1))).get();
            producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.REQUEST_OUTCOMES), "orphan", outcome("orphan", "e9", 0, 0, 5))).get();

            ClassRatios r = await(consumer, x -> "app-a".equals(x.getPrefixClass()) && x.getWindowKind() == WindowKind.TUMBLING
                    && x.getRequests() > 0);
            assertThat(r.getRequests()).as("all four in one window").isEqualTo(4);
            assertThat(r.getAffinityHits()).isEqualTo(2);
            assertThat(r.getAffinityHitRate()).isEqualTo(0.5);
            assertThat(r.getAvoidedTokensPerHit()).isEqualTo(48.0);
            assertThat(r.getAvoidedUsdPerHit()).isCloseTo(48 * 3.0 / 1e6, offset(1e-15));
            assertThat(r.getAffinityRouted()).isEqualTo(3);
            assertThat(r.getStale()).isEqualTo(2);
            assertThat(r.getStalenessRatio()).isCloseTo(2.0 / 3, offset(1e-12));
            assertThat(r.getLoadGini()).isZero();
            assertThat(r.getWindowEndMs() - r.getWindowStartMs()).isEqualTo(WINDOW_MS);
            // The same window as Prometheus scrapes it (until app-a's next window, the unmatched decision's, replaces it).
            String classLabel = "class=\"app_a\""; // Flink's reporter writes label values with _ for any character outside [a-zA-Z0-9:_]
            String metrics = awaitMetrics(METRICS_PORT, m -> metricSum(m, OPERATOR_METRIC + "class_kvr_requests", classLabel).orElse(0.0) == 4);
            assertThat(metricSum(metrics, OPERATOR_METRIC + "class_kvr_affinity_hit_ratio", classLabel)).hasValue(0.5);
            assertThat(metricSum(metrics, OPERATOR_METRIC + "class_kvr_avoided_tokens_per_hit", classLabel)).hasValue(48.0);
            assertThat(metricSum(metrics, OPERATOR_METRIC + "class_kvr_staleness_ratio", classLabel))
                    .hasValueSatisfying(v -> assertThat(v).isCloseTo(2.0 / 3, offset(1e-9)));
            assertThat(metricSum(metrics, OPERATOR_METRIC + "class_kvr_load_gini", classLabel)).hasValue(0.0);
            assertThat(metricSum(metrics, OPERATOR_METRIC + "class_kvr_affinity_on", classLabel)).hasValue(1.0);
            assertThat(metricSum(metrics, OPERATOR_METRIC + "reason_kvr_decisions_total", "reason=\"AFFINITY\"")).as("a1, a2, a3")
                    .hasValueSatisfying(n -> assertThat(n).isGreaterThanOrEqualTo(3));
            assertThat(metricSum(metrics, OPERATOR_METRIC + "reason_kvr_decisions_total", "reason=\"COLD\"")).as("w1, a4")
                    .hasValueSatisfying(n -> assertThat(n).isGreaterThanOrEqualTo(2));

            assertThat(await(consumer, x -> "app-a".equals(x.getPrefixClass()) && x.getUnmatchedDecisions() > 0)
                    .getUnmatchedDecisions()).isEqualTo(1);
            assertThat(await(consumer, x -> ClassAssigner.UNKNOWN.equals(x.getPrefixClass()) && x.getUnmatchedOutcomes() > 0)
                    .getUnmatchedOutcomes()).isEqualTo(1);
            assertThat(await(consumer, x -> "app-a".equals(x.getPrefixClass()) && x.getWindowKind() == WindowKind.SLIDING
                    && x.getRequests() == 4).getAffinityHitRate()).isEqualTo(0.5);

            String classes = new ViewLayout(config.view().keyPrefix()).classesKey();
            RedisClient redis = RedisClient.create(stack.redisUrl());
            try (StatefulRedisConnection<String, String> c = redis.connect()) {
                // The topic and Redis are separate sinks: Redis may be a flush behind.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                String latest;
                while ((latest = c.sync().hget(config.view().keyPrefix() + "ratios", "app-a/sliding")) == null) {
                    assertThat(System.nanoTime()).as("latest sliding ratios of app-a in Redis").isLessThan(deadline);
                    Thread.sleep(50);
                }
                assertThat(latest.split("\\|")).hasSize(11);
                // app-a hits 50 %: affinity stays on. A batch class that never hits has it turned off...
                assertThat(c.sync().hget(classes, "app-a")).isEqualTo("on");
                send(producer, config, decision("b1", "batch", 0), outcome("b1", "e1", 0, 0, 10));
                send(producer, config, decision("b2", "batch", 0), outcome("b2", "e2", 0, 0, 10));
                awaitValue(c, classes, "batch", "off");
                // ...and back on once it pays again (above the 15 % on-threshold).
                send(producer, config, decision("b3", "batch", 2), outcome("b3", "e1", 32, 0, 10));
                send(producer, config, decision("b4", "batch", 2), outcome("b4", "e1", 32, 0, 10));
                awaitValue(c, classes, "batch", "on");

                // A class off for lack of hits cannot earn hits placed on load alone. Its picks still say
                // what the best holder matched: once its prefixes are reused, affinity comes back...
                turnOff(producer, config, c, classes, "long");
                send(producer, config, offDecision("l3", "long", 3), outcome("l3", "e2", 0, 0, 10));
                send(producer, config, offDecision("l4", "long", 4), outcome("l4", "e1", 0, 0, 10));
                awaitValue(c, classes, "long", "on");
                // ...while a truly one-shot class, whose best holder never matches, stays off even when
                // a placement by load happens to hit.
                turnOff(producer, config, c, classes, "once");
                send(producer, config, offDecision("o3", "once", 0), outcome("o3", "e1", 32, 0, 10));
                send(producer, config, offDecision("o4", "once", 0), outcome("o4", "e1", 32, 0, 10));
                ClassRatios judged = await(consumer, x -> "once".equals(x.getPrefixClass()) && x.getWindowKind() == WindowKind.TUMBLING
                        && x.getWouldMatchKnown() == 2 && x.getAffinityHits() == 2);
                assertThat(judged.getWouldMatch()).isZero();
                Thread.sleep(1_000); // the class policy writes after the ratios topic; give it a flush or two
                assertThat(c.sync().hget(classes, "once")).as("one-shot stays off").isEqualTo("off");

                // A client's requests in flight, per engine, for the cap in pick.
                for (String id : List.of("c1", "c2", "c3")) {
                    RoutingDecision d = decision(id, "chat", 0);
                    d.setClientId("burst");
                    producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.ROUTING_DECISIONS), id, d)).get();
                }
                awaitValue(c, config.view().keyPrefix() + "clients", "burst", "e1=3");
                producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.REQUEST_OUTCOMES), "c1", outcome("c1", "e1", 0, 0, 10))).get();
                producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.REQUEST_OUTCOMES), "c2", outcome("c2", "e1", 0, 0, 10))).get();
                awaitValue(c, config.view().keyPrefix() + "clients", "burst", "e1=1");

                // Alerts: app-a's staleness (2 of 3) is over 20 %; batch's affinity went off, then on.
                try (KafkaConsumer<String, Alert> alerts = consumer(stack, config.kafka().topic(TopicNames.ALERTS))) {
                    List<Alert> got = new ArrayList<>();
                    long alertsDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    while (got.stream().noneMatch(a -> a.getKind() == AlertKind.AFFINITY_NOT_PAYING && !a.getFiring())
                            && System.nanoTime() < alertsDeadline) {
                        alerts.poll(Duration.ofMillis(200)).forEach(rec -> got.add(rec.value()));
                    }
                    assertThat(got).filteredOn(a -> a.getKind() == AlertKind.STALE_VIEW && "app-a".equals(a.getSubject()))
                            .first().satisfies(a -> {
                                assertThat(a.getFiring()).isTrue();
                                assertThat(a.getValue()).isCloseTo(2.0 / 3, offset(1e-12));
                                assertThat(a.getThreshold()).isEqualTo(0.2);
                            });
                    assertThat(got).filteredOn(a -> a.getKind() == AlertKind.AFFINITY_NOT_PAYING && "batch".equals(a.getSubject()))
                            .extracting(Alert::getFiring).containsExactly(true, false);
                }
            } finally {
                redis.shutdown();
            }
        } finally {
            job.cancel().get(30, TimeUnit.SECONDS);
        }
    }

    /** Two requests of the class that found nothing cached and whose best holder matched nothing: affinity off. */
    private static void turnOff(KafkaProducer<String, Object> producer, KvRouterJobConfig config, StatefulRedisConnection<String, String> c,
                                String classes, String prefixClass) throws Exception {
        send(producer, config, decision(prefixClass + "-1", prefixClass, 0, 0), outcome(prefixClass + "-1", "e1", 0, 0, 10));
        send(producer, config, decision(prefixClass + "-2", prefixClass, 0, 0), outcome(prefixClass + "-2", "e2", 0, 0, 10));
        awaitValue(c, classes, prefixClass, "off");
    }

    private static void awaitValue(StatefulRedisConnection<String, String> c, String key, String field, String value)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
        while (!value.equals(c.sync().hget(key, field))) {
            assertThat(System.nanoTime()).as("%s %s = %s within 40 s", key, field, value).isLessThan(deadline);
            Thread.sleep(100);
        }
    }

    private final List<ClassRatios> seen = new ArrayList<>();

    private ClassRatios await(KafkaConsumer<String, ClassRatios> consumer, Predicate<ClassRatios> until) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
        while (System.nanoTime() < deadline) {
            for (ClassRatios r : seen) {
                if (until.test(r)) {
                    return r;
                }
            }
            consumer.poll(Duration.ofMillis(200)).forEach(rec -> seen.add(rec.value()));
        }
        throw new AssertionError("no matching ratios within 40 s; seen: " + seen);
    }

    private static void send(KafkaProducer<String, Object> producer, KvRouterJobConfig config, RoutingDecision d, RequestOutcome o)
            throws Exception {
        producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.ROUTING_DECISIONS), d.getRequestId(), d)).get();
        producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.REQUEST_OUTCOMES), o.getRequestId(), o)).get();
    }

    /** A decision that says what the best holder matched. */
    private static RoutingDecision decision(String id, String prefixClass, int predicted, int bestHolder) {
        RoutingDecision d = decision(id, prefixClass, predicted);
        d.setBestHolderBlocks(bestHolder);
        return d;
    }

    /** A request of a class whose affinity is off: placed on load, with what the best holder matched. */
    private static RoutingDecision offDecision(String id, String prefixClass, int bestHolder) {
        RoutingDecision d = decision(id, prefixClass, 0, bestHolder);
        d.setReason(RouteReason.NO_AFFINITY_CLASS);
        return d;
    }

    private static RoutingDecision decision(String id, String prefixClass, int predicted) {
        return RoutingDecision.newBuilder().setRequestId(id).setPrefixClass(prefixClass).setEngineId("e1")
                .setPredictedCachedBlocks(predicted).setReason(predicted > 0 ? RouteReason.AFFINITY : RouteReason.COLD)
                .setTsMs(System.currentTimeMillis()).setPromptBlockHashes(List.of(7L)).build();
    }

    private static RequestOutcome outcome(String id, String engine, int cached, int transferred, double ttft) {
        return RequestOutcome.newBuilder().setRequestId(id).setEngineId(engine).setPromptTokens(1000).setCachedTokens(cached)
                .setTransferredTokens(transferred).setQueueMs(1).setTtftMs(ttft).setStatus(OutcomeStatus.OK)
                .setTsMs(System.currentTimeMillis()).build();
    }

    /** Scrapes the job's metrics until they satisfy {@code until}, for at most 10 s. */
    private static String awaitMetrics(int port, java.util.function.Predicate<String> until) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        String metrics = scrapeMetrics(port).orElse("");
        while (!until.test(metrics) && System.nanoTime() < deadline) {
            Thread.sleep(100);
            metrics = scrapeMetrics(port).orElse("");
        }
        assertThat(until.test(metrics)).as("the job's metrics; class_kvr_ series: %s",
                metrics.lines().filter(l -> l.contains("kvr_requests") || l.contains("kvr_decisions")).map(l -> l.replaceAll("\\{.*\\}", "{…}")).distinct().toList()).isTrue();
        return metrics;
    }

    private static <V> KafkaConsumer<String, V> consumer(StackAddresses stack, String topic) {
        return ViewTestSupport.consumer(stack, "it-reader", topic);
    }
}
