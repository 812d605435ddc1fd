package dev.kvrouter.jobs.view;

import static dev.kvrouter.jobs.view.ViewTestSupport.metricSum;
import static dev.kvrouter.jobs.view.ViewTestSupport.metricValues;
import static dev.kvrouter.jobs.view.ViewTestSupport.scrapeMetrics;
import static dev.kvrouter.jobs.view.ViewTestSupport.OPERATOR_METRIC;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.balancer.KvRouterClient;
import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.common.TopicNames;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.stack.Ports;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.LocalStackExtension;
import dev.kvrouter.stack.junit.UniqueNames;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The job's metrics as Prometheus scrapes them: the local run's cluster with Flink's Prometheus
 * reporter on a free port (what {@code ./kvr job run --metrics-port} sets up), one engine reporting,
 * a stored batch, a sequence gap, a record that is not Avro and a balancer's placement; then
 * {@code /metrics} has the view's freshness and entries, the reservation, the engines by health, the
 * gap, the dead letter by reason, the Redis batches, and Flink's own checkpoint figures.
 */
@ExtendWith(LocalStackExtension.class)
class JobMetricsITCase {

    @Test
    void prometheusScrapesFreshnessEnginesByHealthGapsDeadLettersRedisBatchesAndCheckpoints(StackAddresses stack) throws Exception {
        String topics = ViewTestSupport.topics(stack, "it-metrics");
        KvRouterJobConfig config = ViewTestSupport.config(stack, topics, stack.redisUrl());
        int port = Ports.free();
        StreamExecutionEnvironment env = KvRouterJob.environment(config, null, KvRouterJob.prometheusReporter(Integer.toString(port)));
        KvRouterJob.wire(env, config);
        JobClient job = env.executeAsync("metrics");
        FakeEngine engine = new FakeEngine(UniqueNames.topic("engine"), 16);
        String kvEvents = config.kafka().topic(TopicNames.KV_EVENTS);
        try (KafkaProducer<String, Object> producer = ViewTestSupport.producer(stack);
             KafkaProducer<String, byte[]> raw = new KafkaProducer<>(Map.of(
                     ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.kafkaBootstrap(),
                     ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                     ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
            producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.ENGINE_LOAD), engine.id, engine.load(0, 1))).get();
            int[] prompt = new Random(31).ints(64, 0, 50_000).toArray();
            producer.send(new ProducerRecord<>(kvEvents, engine.id, engine.batch(engine.stored(prompt, 0, 2)))).get();
            engine.seq += 3; // three batches lost
            producer.send(new ProducerRecord<>(kvEvents, engine.id, engine.batch(engine.stored(prompt, 2, 4)))).get();
            raw.send(new ProducerRecord<>(kvEvents, engine.id, "{\"not\":\"avro\"}".getBytes())).get();
            // A balancer's placement: one reservation in Redis, which the job counts.
            long[] chain = new CanonicalBlockHasher(16).chain(FakeEngine.MODEL, null, prompt, List.of());
            try (KvRouterClient router = new KvRouterClient(KvRouterClient.Options.defaults(stack.redisUrl())
                    .withKeyPrefix(config.view().keyPrefix()))) {
                ViewTestSupport.await(() -> router.pick(chain, null, null, "it-metrics-request"),
                        p -> "AFFINITY".equals(p.reason()) && p.matchedBlocks() == 4 && p.requestId() != null);
            }

            long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            String metrics = scrapeMetrics(port).orElse("");
            while (!missing(metrics).isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(500);
                metrics = scrapeMetrics(port).orElse("");
            }
            assertThat(missing(metrics)).as("metrics not scraped yet; the kvr_ series /metrics had: %s",
                    metrics.lines().filter(l -> l.contains("kvr_") && !l.startsWith("#")).map(l -> l.replaceAll("\\{.*\\}", "{…}"))
                            .distinct().toList()).isEmpty();
            assertThat(metricSum(metrics, OPERATOR_METRIC + "kvr_batches_lost_total", "")).as("the three lost batches").hasValue(3.0);
            assertThat(metricSum(metrics, OPERATOR_METRIC + "reason_kvr_dead_letters_total", "reason=\"invalid\"")).as("only the undecodable one")
                    .hasValue(0.0);
            // One series per sink writer; the ratios' writer writes no block or engine, its summary is NaN.
            assertThat(metricValues(metrics, OPERATOR_METRIC + "kvr_view_freshness_ms", "quantile=\"0.99\"").stream().filter(v -> !v.isNaN()))
                    .as("freshness p99, ms").isNotEmpty().allSatisfy(ms -> assertThat(ms).isBetween(0.0, 60_000.0));
            assertThat(metricSum(metrics, OPERATOR_METRIC + "kvr_redis_batches_total", "")).hasValueSatisfying(n -> assertThat(n).isPositive());
            assertThat(metricSum(metrics, OPERATOR_METRIC + "kvr_redis_batch_latency_ms_count", "")).hasValueSatisfying(n -> assertThat(n).isPositive());
            assertThat(metrics).contains("flink_jobmanager_job_lastCheckpointDuration", "flink_jobmanager_job_lastCheckpointSize");
            // No decision or outcome was published: no class judged, and the pick above went to the holder all the same.
            assertThat(metricSum(metrics, OPERATOR_METRIC + "kvr_affinity_classes_judged", "")).hasValue(0.0);
        } finally {
            job.cancel().get(30, TimeUnit.SECONDS);
        }
    }

    /** What the scrape does not show yet, of what the events sent must have caused. */
    private static List<String> missing(String metrics) {
        List<String> missing = new ArrayList<>();
        if (metricSum(metrics, OPERATOR_METRIC + "kvr_view_freshness_ms_count", "").orElse(0.0) < 4) {
            missing.add("kvr_view_freshness_ms_count >= 4 (two blocks, two more, the engine)");
        }
        if (metricSum(metrics, OPERATOR_METRIC + "health_kvr_engines", "health=\"READY\"").orElse(0.0) < 1) {
            missing.add("kvr_engines{health=READY} >= 1");
        }
        if (metricSum(metrics, OPERATOR_METRIC + "kvr_sequence_gaps_total", "").orElse(0.0) < 1) {
            missing.add("kvr_sequence_gaps_total >= 1");
        }
        if (metricSum(metrics, OPERATOR_METRIC + "reason_kvr_dead_letters_total", "reason=\"undecodable\"").orElse(0.0) < 1) {
            missing.add("kvr_dead_letters_total{reason=undecodable} >= 1");
        }
        if (metricSum(metrics, OPERATOR_METRIC + "kvr_view_block_entries", "").orElse(0.0) != 4) {
            missing.add("kvr_view_block_entries = 4 (four blocks on one engine), summed over subtasks");
        }
        if (metricSum(metrics, OPERATOR_METRIC + "kvr_view_reservations", "").orElse(0.0) != 1) {
            missing.add("kvr_view_reservations = 1 (the balancer's one placement)");
        }
        if (metricSum(metrics, "flink_jobmanager_job_numberOfCompletedCheckpoints", "").orElse(0.0) < 1) {
            missing.add("flink_jobmanager_job_numberOfCompletedCheckpoints >= 1");
        }
        return missing;
    }
}
