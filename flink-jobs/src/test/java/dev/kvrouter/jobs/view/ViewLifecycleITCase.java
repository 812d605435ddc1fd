package dev.kvrouter.jobs.view;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.balancer.KvRouterClient;
import dev.kvrouter.balancer.KvRouterClient.Pick;
import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.common.TopicNames;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.events.OutcomeStatus;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RouteReason;
import dev.kvrouter.events.RoutingDecision;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.LocalStackExtension;
import dev.kvrouter.stack.junit.UniqueNames;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The view as a whole: it empties when the job stops, keeps what requests keep using, and
 * parallelism does not change it.
 */
@ExtendWith(LocalStackExtension.class)
class ViewLifecycleITCase {

    @RegisterExtension
    static final MiniClusterExtension FLINK = ViewTestSupport.miniCluster(4);

    @Test
    void withTheJobStoppedTheViewExpiresInsteadOfLying(StackAddresses stack) throws Exception {
        String topics = ViewTestSupport.topics(stack, "it-life");
        KvRouterJobConfig config = config(stack, topics, 1, "3 s");
        JobClient job = start(config, "view expiry");
        FakeEngine engine = new FakeEngine(UniqueNames.topic("engine"), 16);
        int[] prompt = new Random(1).ints(32, 0, 1000).toArray();
        long[] chain = new CanonicalBlockHasher(16).chain(FakeEngine.MODEL, null, prompt, List.of());
        try (KafkaProducer<String, Object> producer = producer(stack);
             KvRouterClient router = new KvRouterClient(KvRouterClient.Options.defaults(stack.redisUrl())
                     .withKeyPrefix(config.view().keyPrefix()).observing().withMaxViewAge(Duration.ofSeconds(60)))) {
            producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.ENGINE_LOAD), engine.id, engine.load(0, 1))).get();
            producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.KV_EVENTS), engine.id, engine.batch(engine.stored(prompt, 0, 2)))).get();
            await(router, chain, p -> p.matchedBlocks() == 2 && "AFFINITY".equals(p.reason()));

            job.cancel().get(30, TimeUnit.SECONDS);
            long stopped = System.currentTimeMillis();
            Pick after = await(router, chain, p -> p.source() != KvRouterClient.Source.VIEW);
            long took = System.currentTimeMillis() - stopped;
            assertThat(after.matchedBlocks()).isZero();
            assertThat(after.reason()).isIn("NO_VIEW", "FALLBACK_LOAD_ONLY");
            assertThat(router.engines()).as("the engine table expired with the view").isEmpty();
            assertThat(took).as("view.ttl is 3 s").isLessThan(10_000);
        }
    }

    @Test
    void aPrefixRequestsKeepReusingStaysInTheViewWhileAnUnusedCopyLapses(StackAddresses stack) throws Exception {
        String topics = ViewTestSupport.topics(stack, "it-life");
        // Residency 1 s: an entry nothing confirms leaves ln(1 / 0.05) = 3 residencies after it was stored.
        KvRouterJobConfig config = ViewTestSupport.config(stack, topics, stack.redisUrl(),
                "engine.default-residency", "1 s", "engine.suspect-after", "5 min", "engine.dead-after", "10 min");
        JobClient job = start(config, "confirmed on use");
        FakeEngine used = new FakeEngine(UniqueNames.topic("used"), 16);
        FakeEngine idle = new FakeEngine(UniqueNames.topic("idle"), 16);
        int[] prompt = new Random(3).ints(64, 0, 1000).toArray();
        long[] chain = new CanonicalBlockHasher(16).chain(FakeEngine.MODEL, null, prompt, List.of());
        ViewLayout layout = new ViewLayout(config.view().keyPrefix());
        String rootKey = layout.groupKey(ViewLayout.tag(chain, 1, config.view().tagDepth()));
        String lastKey = layout.groupKey(ViewLayout.tag(chain, 4, config.view().tagDepth()));
        RedisClient client = RedisClient.create(stack.redisUrl());
        try (KafkaProducer<String, Object> producer = producer(stack);
             StatefulRedisConnection<String, String> redis = client.connect()) {
            for (FakeEngine e : List.of(used, idle)) {
                producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.ENGINE_LOAD), e.id, e.load(0, 1)));
                producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.KV_EVENTS), e.id, e.batch(e.stored(prompt, 0, 4))));
            }
            producer.flush();
            awaitField(redis, rootKey, ViewLayout.hex(chain[0]), v -> v != null && v.contains(used.id) && v.contains(idle.id));

            // Requests keep finding the whole prompt cached on one engine (as an engine reuses a block
            // without storing it again: no KV event) for more than twice an entry's unconfirmed life.
            long until = System.currentTimeMillis() + 8_000;
            for (int n = 0; System.currentTimeMillis() < until; n++) {
                String id = UniqueNames.topic("req-" + n);
                producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.ROUTING_DECISIONS), id, RoutingDecision.newBuilder()
                        .setRequestId(id).setEngineId(used.id).setPredictedCachedBlocks(4).setReason(RouteReason.AFFINITY)
                        .setTsMs(System.currentTimeMillis()).setPromptBlockHashes(Arrays.stream(chain).boxed().toList()).build()));
                producer.send(new ProducerRecord<>(config.kafka().topic(TopicNames.REQUEST_OUTCOMES), id, RequestOutcome.newBuilder()
                        .setRequestId(id).setEngineId(used.id).setPromptTokens(64).setCachedTokens(64).setQueueMs(1)
                        .setTtftMs(5).setStatus(OutcomeStatus.OK).setTsMs(System.currentTimeMillis()).build()));
                Thread.sleep(250);
            }
            String root = redis.sync().hget(rootKey, ViewLayout.hex(chain[0]));
            assertThat(root).as("the used copy stays, the unused one lapsed").contains(used.id + "=").doesNotContain(idle.id);
            assertThat(redis.sync().hget(lastKey, ViewLayout.hex(chain[3]))).contains(used.id + "=");

            // Once requests stop, the used copy lapses by the same rule.
            awaitField(redis, rootKey, ViewLayout.hex(chain[0]), v -> v == null);
        } finally {
            job.cancel().get(30, TimeUnit.SECONDS);
            client.shutdown();
        }
    }

    private static void awaitField(StatefulRedisConnection<String, String> redis, String key, String field,
                                   java.util.function.Predicate<String> until) throws InterruptedException {
        long deadline = System.nanoTime() + ViewTestSupport.WAIT.toNanos();
        String value = null;
        while (System.nanoTime() < deadline) {
            value = redis.sync().hget(key, field);
            if (until.test(value)) {
                return;
            }
            Thread.sleep(100);
        }
        throw new AssertionError(key + " " + field + " is still " + value);
    }

    @Test
    void theSameInputAtParallelismOneAndTwoYieldsTheSameView(StackAddresses stack) throws Exception {
        String topics = ViewTestSupport.topics(stack, "it-life");
        // Input first, so both jobs read exactly the same records from the start.
        try (KafkaProducer<String, Object> producer = producer(stack)) {
            KvRouterJobConfig any = config(stack, topics, 1, "30 s");
            Random random = new Random(42);
            int[][] prompts = new int[6][];
            for (int i = 0; i < prompts.length; i++) {
                prompts[i] = random.ints(64 + 16 * i, 0, 5000).toArray();
                prompts[i][0] = 7; // a shared first chunk across prompts 0..2: a hot root
                System.arraycopy(prompts[0], 0, prompts[i], 0, i < 3 ? 16 : 0);
            }
            for (int e = 0; e < 4; e++) {
                FakeEngine engine = new FakeEngine("engine-" + e, 16);
                producer.send(new ProducerRecord<>(any.kafka().topic(TopicNames.ENGINE_LOAD), engine.id, engine.load(e, 1)));
                for (int p = e % 2; p < prompts.length; p += 2) {
                    int blocks = prompts[p].length / 16;
                    producer.send(new ProducerRecord<>(any.kafka().topic(TopicNames.KV_EVENTS), engine.id, engine.batch(engine.stored(prompts[p], 0, blocks))));
                }
                producer.send(new ProducerRecord<>(any.kafka().topic(TopicNames.KV_EVENTS), engine.id, engine.batch(engine.removed(prompts[e % 2], 2, 4))));
                if (e == 3) {
                    producer.send(new ProducerRecord<>(any.kafka().topic(TopicNames.KV_EVENTS), engine.id, engine.batch(FakeEngine.cleared())));
                    producer.send(new ProducerRecord<>(any.kafka().topic(TopicNames.KV_EVENTS), engine.id, engine.batch(engine.stored(prompts[5], 0, 3))));
                }
            }
            producer.flush();
        }
        KvRouterJobConfig one = config(stack, topics, 1, "30 s");
        KvRouterJobConfig two = config(stack, topics, 2, "30 s");
        JobClient jobOne = start(one, "parallelism 1");
        JobClient jobTwo = start(two, "parallelism 2");
        try {
            Map<String, String> viewOne = awaitStable(stack, one.view().keyPrefix());
            Map<String, String> viewTwo = awaitStable(stack, two.view().keyPrefix());
            assertThat(viewOne).hasSizeGreaterThan(20);
            assertThat(viewTwo).isEqualTo(viewOne);
        } finally {
            jobOne.cancel().get(30, TimeUnit.SECONDS);
            jobTwo.cancel().get(30, TimeUnit.SECONDS);
        }
    }

    /** Every block field of a view as "group field" → holders, once two reads 2 s apart agree. */
    private static Map<String, String> awaitStable(StackAddresses stack, String prefix) throws InterruptedException {
        RedisClient client = RedisClient.create(stack.redisUrl());
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            Map<String, String> previous = Map.of();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < deadline) {
                Map<String, String> now = new TreeMap<>();
                // Every page of the scan: other tests' keys share this Redis, and one page covers only part of it.
                io.lettuce.core.KeyScanCursor<String> page = c.sync().scan(ScanArgs.Builder.matches(prefix + "g:*").limit(10_000));
                while (true) {
                    for (String key : page.getKeys()) {
                        c.sync().hgetall(key).forEach((field, value) -> now.put(key.substring(prefix.length()) + " " + field, value));
                    }
                    if (page.isFinished()) {
                        break;
                    }
                    page = c.sync().scan(page, ScanArgs.Builder.matches(prefix + "g:*").limit(10_000));
                }
                if (!now.isEmpty() && now.equals(previous)) {
                    return now;
                }
                previous = now;
                Thread.sleep(2_000);
            }
            throw new AssertionError("the view under " + prefix + " did not settle within 60 s");
        } finally {
            client.shutdown();
        }
    }

    private static KvRouterJobConfig config(StackAddresses stack, String topics, int parallelism, String viewTtl) {
        return ViewTestSupport.config(stack, topics, stack.redisUrl(),
                "view.ttl", viewTtl,
                "engine.suspect-after", "5 min",
                "engine.dead-after", "10 min",
                "job.parallelism", Integer.toString(parallelism));
    }

    private static JobClient start(KvRouterJobConfig config, String name) throws Exception {
        StreamExecutionEnvironment env = KvRouterJob.environment(config);
        KvRouterJob.wire(env, config);
        return env.executeAsync(name);
    }

    private static KafkaProducer<String, Object> producer(StackAddresses stack) {
        return ViewTestSupport.producer(stack);
    }

    private static Pick await(KvRouterClient router, long[] chain, java.util.function.Predicate<Pick> until) throws InterruptedException {
        return ViewTestSupport.await(() -> router.pick(chain), until);
    }
}
