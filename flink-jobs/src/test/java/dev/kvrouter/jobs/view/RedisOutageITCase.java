package dev.kvrouter.jobs.view;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.balancer.KvRouterClient;
import dev.kvrouter.balancer.KvRouterClient.Pick;
import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.common.TopicNames;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.TcpProxy;
import dev.kvrouter.stack.junit.LocalStackExtension;
import dev.kvrouter.stack.junit.UniqueNames;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Redis goes away under the running job and comes back: the view catches up, nothing is lost. */
@ExtendWith(LocalStackExtension.class)
class RedisOutageITCase {

    @RegisterExtension
    static final MiniClusterExtension FLINK = ViewTestSupport.miniCluster(2);

    @Test
    void writesMadeWhileRedisIsDownReachTheViewOnceItIsBack(StackAddresses stack) throws Exception {
        String topics = ViewTestSupport.topics(stack, "it-outage");
        String[] redis = stack.redisHostPort().split(":");
        TcpProxy proxy = new TcpProxy(redis[0], Integer.parseInt(redis[1]));
        int port = proxy.port();
        KvRouterJobConfig config = ViewTestSupport.config(stack, topics, "redis://127.0.0.1:" + port,
                "engine.suspect-after", "5 min", "engine.dead-after", "10 min");
        StreamExecutionEnvironment env = KvRouterJob.environment(config);
        KvRouterJob.wire(env, config);
        JobClient job = env.executeAsync("redis outage");
        FakeEngine engine = new FakeEngine(UniqueNames.topic("engine"), 16);
        Random random = new Random(5);
        int[] before = random.ints(32, 0, 1000).toArray();
        int[] during = random.ints(32, 0, 1000).toArray();
        CanonicalBlockHasher hasher = new CanonicalBlockHasher(16);
        // The balancer reads Redis directly; only the job's connection goes through the proxy.
        try (KafkaProducer<String, Object> producer = ViewTestSupport.producer(stack);
             KvRouterClient router = new KvRouterClient(KvRouterClient.Options.defaults(stack.redisUrl())
                     .withKeyPrefix(config.view().keyPrefix()).observing().withMaxViewAge(Duration.ofMinutes(5)))) {
            producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.ENGINE_LOAD), engine.id, engine.load(0, 1))).get();
            producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.KV_EVENTS), engine.id, engine.batch(engine.stored(before, 0, 2)))).get();
            long[] beforeChain = hasher.chain(FakeEngine.MODEL, null, before, List.of());
            ViewTestSupport.await(() -> router.pick(beforeChain), p -> p.matchedBlocks() == 2);

            proxy.close(); // Redis is gone for the job
            producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.KV_EVENTS), engine.id, engine.batch(engine.stored(during, 0, 2)))).get();
            Thread.sleep(2_000);
            long[] duringChain = hasher.chain(FakeEngine.MODEL, null, during, List.of());
            assertThat(router.pick(duringChain).matchedBlocks()).as("nothing can reach Redis yet").isZero();

            proxy = new TcpProxy(port, redis[0], Integer.parseInt(redis[1])); // and back, on the same address
            Pick caughtUp = ViewTestSupport.await(() -> router.pick(duringChain), p -> p.matchedBlocks() == 2);
            assertThat(caughtUp).extracting(Pick::engineId, Pick::reason).containsExactly(engine.id, "AFFINITY");
            assertThat(router.pick(beforeChain).matchedBlocks()).as("what was there before is still there").isEqualTo(2);
        } finally {
            job.cancel().get(30, TimeUnit.SECONDS);
            proxy.close();
        }
    }
}
