package dev.kvrouter.jobs.view;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.balancer.KvRouterClient;
import dev.kvrouter.balancer.KvRouterClient.Pick;
import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.common.TopicNames;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.events.EngineHealth;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.stack.LocalKafka;
import dev.kvrouter.stack.LocalRedis;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.TcpProxy;
import dev.kvrouter.stack.junit.LocalStackExtension;
import dev.kvrouter.stack.junit.UniqueNames;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The network between the running job and Kafka cut for twice {@code engine.dead-after}, while the
 * engine goes on producing into Kafka: on a broker of its own whose second listener the job reaches
 * through a relay the test cuts (the engine and the test use the main listener). Afterwards no engine
 * was ever SUSPECT or DEAD, a pick answers from the view within 5 s of the link's return, and the
 * view holds exactly the entries of a run without the cut.
 */
@ExtendWith(LocalStackExtension.class)
class KafkaCutITCase {

    private static final Duration DEAD_AFTER = Duration.ofSeconds(3);

    @RegisterExtension
    static final MiniClusterExtension FLINK = ViewTestSupport.miniCluster(2);

    @TempDir
    Path dir;

    @Test
    void aKafkaCutUnderARunningJobKillsNoEngineAndLosesNoEntryAndPicksWorkSoonAfter(StackAddresses stack) throws Exception {
        try (LocalKafka kafka = LocalKafka.startWithLink(dir.resolve("kafka"));
             LocalRedis redis = LocalRedis.start(dir.resolve("redis"))) {
            // The engine's side: the broker's main listener; the job's: the link.
            StackAddresses direct = new StackAddresses(kafka.bootstrap(), stack.schemaRegistryUrl(), redis.url());
            String topics = ViewTestSupport.topics(direct, "it-kafka-cut");
            KvRouterJobConfig config = ViewTestSupport.config(direct, topics, redis.url(), "kafka.bootstrap", kafka.linkBootstrap(),
                    "engine.suspect-after", "2 s", "engine.dead-after", DEAD_AFTER.toSeconds() + " s",
                    "engine.default-residency", "1 h", "engine.max-residency", "1 h");
            ViewLayout layout = new ViewLayout(config.view().keyPrefix());
            FakeEngine engine = new FakeEngine(UniqueNames.topic("engine"), 16);
            List<int[]> prompts = ViewTestSupport.prompts(31, 200, 8);
            Set<String> clean = ViewTestSupport.entriesOf(layout, engine.id, prompts, config.view().tagDepth());
            long[] chain = new CanonicalBlockHasher(16).chain(FakeEngine.MODEL, null, prompts.get(50), List.of()); // a first-half prompt: the view answers again
            TcpProxy link = new TcpProxy(kafka.linkPort(), "127.0.0.1", kafka.linkTargetPort());
            RedisClient client = RedisClient.create(redis.url());
            JobClient job = null;
            try (StatefulRedisConnection<String, String> connection = client.connect();
                 KafkaProducer<String, Object> producer = ViewTestSupport.producer(direct);
                 ViewTestSupport.Heartbeats alive = new ViewTestSupport.Heartbeats(producer, config, engine);
                 KvRouterClient router = new KvRouterClient(KvRouterClient.Options.defaults(redis.url())
                         .withKeyPrefix(config.view().keyPrefix()).observing())) {
                StreamExecutionEnvironment env = KvRouterJob.environment(config, null);
                KvRouterJob.wire(env, config);
                job = env.executeAsync("kafka-cut");
                store(producer, config, engine, prompts.subList(0, 100));
                Set<String> firstHalf = ViewTestSupport.entriesOf(layout, engine.id, prompts.subList(0, 100), config.view().tagDepth());
                ViewTestSupport.awaitTrue(() -> entries(connection, layout).equals(firstHalf), "the first half in the view", Duration.ofSeconds(90));

                link.close(); // the cut: the job hears nothing from Kafka and can send it nothing
                store(producer, config, engine, prompts.subList(100, 200)); // the engine goes on
                Thread.sleep(2 * DEAD_AFTER.toMillis());
                assertThat(entries(connection, layout)).as("nothing came through the cut").isEqualTo(firstHalf);

                link = new TcpProxy(kafka.linkPort(), "127.0.0.1", kafka.linkTargetPort()); // back, on the same port
                long back = System.nanoTime();
                Pick pick = ViewTestSupport.await(() -> router.pick(chain), p -> p.source() == KvRouterClient.Source.VIEW
                        && "AFFINITY".equals(p.reason()));
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - back);
                System.out.printf("KafkaCutITCase: a pick from the view %d ms after the link came back%n", ms);
                assertThat(ms).as("a pick from the view within 5 s of the link's return").isLessThanOrEqualTo(5_000);
                assertThat(pick).extracting(Pick::engineId, Pick::matchedBlocks).containsExactly(engine.id, 8);
                ViewTestSupport.awaitTrue(() -> entries(connection, layout).equals(clean), "every entry of a run without the cut",
                        Duration.ofSeconds(60));
                assertThat(connection.sync().hget(layout.enginesKey(), engine.id)).startsWith("READY|");
                assertThat(ViewTestSupport.healthChanges(direct, config, engine.id)).as("the engine was never taken for silent")
                        .contains(EngineHealth.READY).doesNotContain(EngineHealth.SUSPECT, EngineHealth.DEAD);
            } finally {
                if (job != null) {
                    job.cancel().get(30, TimeUnit.SECONDS);
                }
                link.close();
                client.shutdown();
            }
        }
    }

    /** One batch per 20 prompts, every block of each, into Kafka directly. */
    private static void store(KafkaProducer<String, Object> producer, KvRouterJobConfig config, FakeEngine engine, List<int[]> prompts) {
        for (int i = 0; i < prompts.size(); i += 20) {
            Object[] events = prompts.subList(i, Math.min(prompts.size(), i + 20)).stream().map(p -> engine.stored(p, 0, p.length / 16)).toArray();
            producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.KV_EVENTS), engine.id, engine.batch(events)));
        }
        producer.flush();
    }

    private static Set<String> entries(StatefulRedisConnection<String, String> connection, ViewLayout layout) {
        return ViewTestSupport.entries(ViewTestSupport.blockFields(connection.sync(), layout));
    }
}
