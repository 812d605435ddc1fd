package dev.kvrouter.jobs.view;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.balancer.KvRouterClient;
import dev.kvrouter.balancer.KvRouterClient.Pick;
import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.common.TopicNames;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.stack.LocalRedisCluster;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.LocalStackExtension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.nio.file.Path;
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
import org.junit.jupiter.api.io.TempDir;

/** The view on a real 3-primary Redis Cluster: written by the job, read by the balancer client picking client-side. */
@ExtendWith(LocalStackExtension.class)
class RoutingViewClusterITCase {

    @RegisterExtension
    static final MiniClusterExtension FLINK = ViewTestSupport.miniCluster(2);

    @TempDir
    Path dir;

    @Test
    void theJobWritesTheViewToARedisClusterAndTheClientPicksFromIt(StackAddresses stack) throws Exception {
        String topics = ViewTestSupport.topics(stack, "it-cluster");
        try (LocalRedisCluster redis = LocalRedisCluster.start(3, dir)) {
            KvRouterJobConfig config = ViewTestSupport.config(stack, topics, redis.url(),
                    "engine.suspect-after", "5 min", "engine.dead-after", "10 min");
            StreamExecutionEnvironment env = KvRouterJob.environment(config);
            KvRouterJob.wire(env, config);
            JobClient job = env.executeAsync("routing view on a cluster");
            FakeEngine a = new FakeEngine("engine-a", 16);
            FakeEngine b = new FakeEngine("engine-b", 16);
            int[] prompt = new Random(3).ints(64, 0, 1000).toArray();
            long[] chain = new CanonicalBlockHasher(16).chain(FakeEngine.MODEL, null, prompt, List.of());
            try (KafkaProducer<String, Object> producer = ViewTestSupport.producer(stack);
                 KvRouterClient router = new KvRouterClient(KvRouterClient.Options.defaults(redis.url())
                         .withKeyPrefix(config.view().keyPrefix()).observing().withMaxViewAge(Duration.ofSeconds(30)))) {
                for (FakeEngine e : List.of(a, b)) {
                    producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.ENGINE_LOAD), e.id, e.load(0, 1))).get();
                }
                producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.KV_EVENTS), a.id, a.batch(a.stored(prompt, 0, 4)))).get();
                producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.KV_EVENTS), b.id, b.batch(b.stored(prompt, 0, 2)))).get();

                Pick p = await(router, chain, x -> x.matchedBlocks() == 4);
                assertThat(p).extracting(Pick::engineId, Pick::reason, Pick::source)
                        .containsExactly(a.id, "AFFINITY", KvRouterClient.Source.VIEW);

                producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.KV_EVENTS), a.id, a.batch(a.removed(prompt, 1, 4)))).get();
                Pick after = await(router, chain, x -> x.engineId().equals(b.id));
                assertThat(after.matchedBlocks()).isEqualTo(2);
            } finally {
                job.cancel().get(30, TimeUnit.SECONDS);
            }
            // The sink loaded the pick library on every primary, since any of them may be asked.
            for (int port : redis.ports()) {
                RedisClient node = RedisClient.create("redis://127.0.0.1:" + port);
                try (StatefulRedisConnection<String, String> c = node.connect()) {
                    assertThat(c.sync().functionList("kvrouter")).as("node " + port).hasSize(1);
                } finally {
                    node.shutdown();
                }
            }
        }
    }

    /**
     * A failover under load with the job's default liveness (suspect after 5 s, dead after 15 s): a
     * replica takes its primary's slots while two engines store prompts and report their load. The
     * sink's writes to the old primary fail and are retried against the new one; afterwards no engine
     * was ever DEAD, both are READY in the view, and a prompt stored after the failover is picked on
     * its holder.
     */
    @Test
    void aFailoverUnderLoadWithTheDefaultDeadAfterKillsNoEngineAndPicksWorkAfter(StackAddresses stack) throws Exception {
        String topics = ViewTestSupport.topics(stack, "it-cluster-failover");
        try (LocalRedisCluster redis = LocalRedisCluster.start(3, 1, dir)) {
            int replica = redis.replicaInSync();
            KvRouterJobConfig config = ViewTestSupport.config(stack, topics, redis.url());
            StreamExecutionEnvironment env = KvRouterJob.environment(config);
            KvRouterJob.wire(env, config);
            JobClient job = env.executeAsync("routing view across a failover");
            FakeEngine a = new FakeEngine("engine-a", 16);
            FakeEngine b = new FakeEngine("engine-b", 16);
            List<int[]> prompts = ViewTestSupport.prompts(41, 1_200, 4);
            java.util.concurrent.ScheduledExecutorService load = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
            try (KafkaProducer<String, Object> producer = ViewTestSupport.producer(stack);
                 ViewTestSupport.Heartbeats aliveA = new ViewTestSupport.Heartbeats(producer, config, a);
                 ViewTestSupport.Heartbeats aliveB = new ViewTestSupport.Heartbeats(producer, config, b);
                 KvRouterClient router = new KvRouterClient(KvRouterClient.Options.defaults(redis.url())
                         .withKeyPrefix(config.view().keyPrefix()).observing())) {
                // The load: ten prompts every 500 ms, alternately on each engine, for a minute.
                java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
                load.scheduleAtFixedRate(() -> {
                    int from = next.getAndAdd(10);
                    if (from + 10 <= prompts.size()) {
                        FakeEngine e = (from / 10) % 2 == 0 ? a : b;
                        Object[] events = prompts.subList(from, from + 10).stream().map(p -> e.stored(p, 0, 4)).toArray();
                        producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.KV_EVENTS), e.id, e.batch(events)));
                    }
                }, 0, 500, TimeUnit.MILLISECONDS);
                long[] early = new CanonicalBlockHasher(16).chain(FakeEngine.MODEL, null, prompts.get(0), List.of());
                await(router, early, x -> "AFFINITY".equals(x.reason()));

                redis.takeOver(replica);
                Thread.sleep(20_000); // past dead-after (15 s) under load, the engines reporting all along

                int stored = next.get();
                int[] late = prompts.get(Math.min(stored, prompts.size()) - 5); // stored after the failover
                FakeEngine holder = ((Math.min(stored, prompts.size()) - 5) / 10) % 2 == 0 ? a : b;
                long[] chain = new CanonicalBlockHasher(16).chain(FakeEngine.MODEL, null, late, List.of());
                Pick p = await(router, chain, x -> "AFFINITY".equals(x.reason()));
                assertThat(p).extracting(Pick::engineId, Pick::matchedBlocks, Pick::source)
                        .containsExactly(holder.id, 4, KvRouterClient.Source.VIEW);
                assertThat(router.engines()).as("both engines in the view, ready").hasEntrySatisfying(a.id, e -> assertThat(e.status())
                        .isEqualTo("READY")).hasEntrySatisfying(b.id, e -> assertThat(e.status()).isEqualTo("READY"));
                for (FakeEngine e : List.of(a, b)) {
                    assertThat(ViewTestSupport.healthChanges(stack, config, e.id)).as("%s never taken for dead", e.id)
                            .doesNotContain(dev.kvrouter.events.EngineHealth.DEAD);
                }
            } finally {
                load.shutdownNow();
                job.cancel().get(30, TimeUnit.SECONDS);
            }
        }
    }

    /** Client-side picking caches for 100 ms; refresh so each try sees the latest view. */
    private static Pick await(KvRouterClient router, long[] chain, java.util.function.Predicate<Pick> until) throws InterruptedException {
        return ViewTestSupport.await(() -> {
            router.refresh();
            return router.pick(chain);
        }, until);
    }
}
