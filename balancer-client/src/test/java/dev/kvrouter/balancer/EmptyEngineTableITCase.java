package dev.kvrouter.balancer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.balancer.KvRouterClient.Pick;
import dev.kvrouter.balancer.KvRouterClient.Source;
import dev.kvrouter.contract.ViewLayout;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fresh view whose engine table is empty (the job just started, Redis restarted, every engine
 * dead), or Redis gone before the client ever read the table: a balancer given its engines routes
 * by its own least connections over them and says so; one that was given none answers no engine.
 * On a Redis of its own, so that it can be stopped.
 */
class EmptyEngineTableITCase {

    @TempDir
    Path dir;

    private PrivateViewRedis view;
    private RedisCommands<String, String> redis;
    private final ViewLayout layout = new ViewLayout("empty:");
    private final long[] prompt = {1, 2, 3};

    @BeforeEach
    void setUp() {
        view = new PrivateViewRedis(dir.resolve("redis"));
        redis = view.redis;
        redis.hset(layout.metaKey(), Map.of("updated_ms", Long.toString(System.currentTimeMillis() + 3_600_000), "busy_factor", "2.0",
                "confidence_floor", "0.05")); // fresh for the whole test; no engine table at all
    }

    @AfterEach
    void tearDown() {
        view.close();
    }

    private KvRouterClient.Options options(List<String> fallbackEngines) {
        return KvRouterClient.Options.builder(view.url()).keyPrefix(layout.prefix()).fallbackEngines(fallbackEngines).build();
    }

    @Test
    void withTheEngineTableEmptyTheGivenEnginesAreUsedByTheClientsOwnLeastConnections() {
        try (KvRouterClient router = new KvRouterClient(options(List.of("a", "b")))) {
            Pick first = router.pick(prompt, null, null, "r1");
            Pick second = router.pick(prompt, null, null, "r2");
            assertThat(List.of(first.engineId(), second.engineId())).as("one request each").containsExactlyInAnyOrder("a", "b");
            assertThat(first).extracting(Pick::reason, Pick::source, Pick::matchedBlocks)
                    .containsExactly("FALLBACK_LOAD_ONLY", Source.FALLBACK_NO_ENGINES, 0);
            router.done("r1");
            assertThat(router.pick(prompt, null, null, "r3").engineId()).as("r1's engine has none in flight now").isEqualTo(first.engineId());
            assertThat(router.pick(prompt, null, null, "r4", Set.of("a")).engineId()).as("an engine it could not reach is left out")
                    .isEqualTo("b");
            assertThat(router.pick(prompt, null, null, "r5", Set.of("a", "b"))).extracting(Pick::engineId, Pick::source)
                    .containsExactly("", Source.NO_ENGINE);
        }
    }

    @Test
    void withNoEnginesGivenAnEmptyTableAnswersNoEngine() {
        try (KvRouterClient router = new KvRouterClient(options(List.of()))) {
            assertThat(router.pick(prompt, null, null, "r1")).extracting(Pick::engineId, Pick::source).containsExactly("", Source.NO_ENGINE);
        }
    }

    @Test
    void redisGoneBeforeAnyTableWasReadUsesTheGivenEnginesAndSaysRedisIsDown() {
        try (KvRouterClient router = new KvRouterClient(options(List.of("a", "b")))) {
            view.server.close();
            Pick first = router.pick(prompt, null, null, "r1");
            Pick second = router.pick(prompt, null, null, "r2");
            assertThat(first).extracting(Pick::reason, Pick::source).containsExactly("FALLBACK_LOAD_ONLY", Source.FALLBACK_REDIS_DOWN);
            assertThat(List.of(first.engineId(), second.engineId())).containsExactlyInAnyOrder("a", "b");
        }
    }
}
