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
            justAfterAWindowOpens();
            // The cost view: a1 saves all of its 40 ms (4 of 4 blocks found), a2 half of its 40 (2 of 4), a3 none
            // of its 20 (stale); a4, cold, none. Waits added: 10, 20, 30, 0.
            send(producer, config, costed(decision("a1", "app-a", 4), 40, 10), outcome("a1", "e1", 64, 0, 100));
            send(producer, config, costed(decision("a2", "app-a", 4), 40, 20), outcome("a2", "e1", 32, 0, 200));
            send(producer, config, costed(decision("a3", "app-a", 2), 20, 30), outcome("a3", "e2", 0, 0, 300));
            send(producer, config, costed(decision("a4", "app-a", 0), 0, 0), outcome("a4", "e2", 0, 512, 400));
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
            assertThat(r.getCostKnown()).isEqualTo(4);
            assertThat(r.getSavedPrefillMsPerRequest()).as("(40 + 20 + 0 + 0) / 4").isEqualTo(15.0);
            assertThat(r.getAddedWaitMsPerRequest()).as("(10 + 20 + 30 + 0) / 4").isEqualTo(15.0);
            // The same window as Prometheus scrapes it (until app-a's next window, the unmatched decision's, replaces it).
            String classLabel = "class=\"app_a\""; // Flink's reporter writes label values with _ for any character outside [a-zA-Z0-9:_]
            String metrics = awaitMetrics(METRICS_PORT, m -> metricSum(m, OPERATOR_METRIC + "class_kvr_requests", classLabel).orElse(0.0) == 4);
            assertThat(metricSum(metrics, OPERATOR_METRIC + "class_kvr_affinity_hit_ratio", classLabel)).hasValue(0.5);
            assertThat(metricSum(metrics, OPERATOR_METRIC + "class_kvr_avoided_tokens_per_hit", classLabel)).hasValue(48.0);
            assertThat(metricSum(metrics, OPERATOR_METRIC + "class_kvr_staleness_ratio", classLabel))
                    .hasValueSatisfying(v -> assertThat(v).isCloseTo(2.0 / 3, offset(1e-9)));
            assertThat(metricSum(metrics, OPERATOR_METRIC + "class_kvr_load_gini", classLabel)).hasValue(0.0);
            assertThat(metricSum(metrics, OPERATOR_METRIC + "class_kvr_affinity_saved_ms_per_request", classLabel)).hasValue(15.0);
            assertThat(metricSum(metrics, OPERATOR_METRIC + "class_kvr_affinity_added_wait_ms_per_request", classLabel)).hasValue(15.0);
            assertThat(metricSum(metrics, OPERATOR_METRIC + "class_kvr_affinity_paid", classLabel)).as("15 ms of wait, 3 x 15 ms saved")
                    .hasValue(1.0);
            assertThat(metricSum(metrics, OPERATOR_METRIC + "kvr_affinity_classes_judged", "")).hasValueSatisfying(n -> assertThat(n)
                    .isGreaterThanOrEqualTo(1));
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
                // Nothing switches a class's affinity off: kvr_pick prices each request, and the job writes no class policy.
                // A class with a 4 % hit rate whose one hit saves seconds paid (jobs before switched it off below 5 %)...
                justAfterAWindowOpens();
                for (int i = 0; i < 24; i++) {
                    send(producer, config, costed(decision("lp" + i, "long-prefix", 0), 0, 5), outcome("lp" + i, "e2", 0, 0, 10));
                }
                send(producer, config, costed(decision("lp-hit", "long-prefix", 60), 2_000, 40), outcome("lp-hit", "e1", 960, 0, 10));
                ClassRatios longPrefix = await(consumer, x -> "long-prefix".equals(x.getPrefixClass())
                        && x.getWindowKind() == WindowKind.TUMBLING && x.getCostKnown() == 25);
                assertThat(longPrefix.getAffinityHitRate()).isEqualTo(0.04);
                assertThat(longPrefix.getSavedPrefillMsPerRequest()).isEqualTo(80.0);
                assertThat(longPrefix.getAddedWaitMsPerRequest()).isCloseTo((24 * 5 + 40) / 25.0, offset(1e-9));
                // ...while a class placed on holders that no longer held its prompts queued for nothing: it did not pay
                // (the alert below), and it is not switched off either.
                justAfterAWindowOpens();
                send(producer, config, costed(decision("s1", "stale", 8), 80, 300), outcome("s1", "e1", 0, 0, 10));
                send(producer, config, costed(decision("s2", "stale", 8), 80, 300), outcome("s2", "e1", 0, 0, 10));
                await(consumer, x -> "stale".equals(x.getPrefixClass()) && x.getWindowKind() == WindowKind.TUMBLING && x.getCostKnown() == 2);
                // ...and once its placements save again, it pays again, the next window.
                justAfterAWindowOpens();
                send(producer, config, costed(decision("s3", "stale", 8), 80, 10), outcome("s3", "e1", 128, 0, 10));
                send(producer, config, costed(decision("s4", "stale", 8), 80, 10), outcome("s4", "e1", 128, 0, 10));
                await(consumer, x -> "stale".equals(x.getPrefixClass()) && x.getWindowKind() == WindowKind.TUMBLING
                        && x.getSavedPrefillMsPerRequest() == 80.0);
                Thread.sleep(1_000); // the ratios reach Redis a flush after the topic
                assertThat(c.sync().hgetall(classes)).as("no class is ever switched off").isEmpty();

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

                // Alerts: app-a's staleness (2 of 3) is over 20 %; the stale class's affinity did not pay, then did;
                // long-prefix's paid throughout.
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
                    assertThat(got).filteredOn(a -> a.getKind() == AlertKind.AFFINITY_NOT_PAYING && "stale".equals(a.getSubject()))
                            .extracting(Alert::getFiring).containsExactly(true, false);
                    assertThat(got).filteredOn(a -> a.getKind() == AlertKind.AFFINITY_NOT_PAYING && a.getFiring())
                            .extracting(Alert::getSubject).containsOnly("stale");
                }
            } finally {
                redis.shutdown();
            }
        } finally {
            job.cancel().get(30, TimeUnit.SECONDS);
        }
    }

    /** Requests sent from here to a few hundred milliseconds on fall into one tumbling window. */
    private static void justAfterAWindowOpens() throws InterruptedException {
        while (System.currentTimeMillis() % WINDOW_MS < 300 || System.currentTimeMillis() % WINDOW_MS > 800) {
            Thread.sleep(10);
        }
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

    /** The decision with its cost view: the prefill it expects to skip and the wait it adds. */
    private static RoutingDecision costed(RoutingDecision d, double savedMs, double addedWaitMs) {
        d.setSavedPrefillMs(savedMs);
        d.setAddedWaitMs(addedWaitMs);
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
