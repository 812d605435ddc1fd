package dev.kvrouter.balancer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.blocks.CanonicalBlockHasher;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Placing on load alone is written twice, because the balancer must do it when Redis cannot: the library's
 * least_loaded (a view too old to trust) and the Java client's from its own copy of the engine table (no view,
 * Redis away). Both on the same random engine tables, with nothing reserved: the same engine every time.
 */
class LoadOnlyFallbackITCase {

    private static final List<String> STATUSES = List.of("READY", "READY", "READY", "BUSY", "SUSPECT", "DRAINING", "DEAD", "RESTARTED");

    @TempDir
    Path dir;

    @Test
    void theLibraryAndTheClientPlaceOnLoadAloneAlike() {
        try (PrivateViewRedis view = new PrivateViewRedis(dir.resolve("redis"))) {
            RedisCommands<String, String> redis = view.redis;
            long[] chain = new CanonicalBlockHasher(16).chain("m", null, IntStream.range(0, 64).toArray(), List.of());
            Random random = new Random(38);
            int differentFromFirstLive = 0;
            for (int table = 0; table < 300; table++) {
                ViewLayout layout = new ViewLayout("fallback-" + table + ":");
                long now = System.currentTimeMillis();
                int engines = 1 + random.nextInt(6);
                for (int e = 1; e <= engines; e++) {
                    String role = random.nextInt(6) == 0 ? EngineEntry.DECODE : EngineEntry.BOTH;
                    redis.hset(layout.enginesKey(), "e" + e, new EngineEntry(STATUSES.get(random.nextInt(STATUSES.size())),
                            random.nextInt(4), random.nextInt(6), 500, 600_000, 1, false, now, role, random.nextInt(3) * 4, 0, 0).encode());
                }
                var options = KvRouterClient.Options.defaults(view.url()).withKeyPrefix(layout.prefix()).observing();
                String library;
                String client;
                try (KvRouterClient router = new KvRouterClient(options)) {
                    // The library: a view an hour old, placed on load alone.
                    redis.hset(layout.metaKey(), Map.of("updated_ms", Long.toString(now - 3_600_000), "confidence_floor", "0.05"));
                    KvRouterClient.Pick stale = router.pick(chain);
                    assertThat(stale.reason()).as("table %d", table).isIn("FALLBACK_LOAD_ONLY", "NO_VIEW");
                    library = stale.engineId() == null ? "" : stale.engineId();
                    // The client: no view at all, from its own read of the engine table.
                    redis.del(layout.metaKey());
                    KvRouterClient.Pick none = router.pick(chain);
                    client = none.engineId() == null ? "" : none.engineId();
                }
                assertThat(client).as("table %d: %s", table, redis.hgetall(layout.enginesKey())).isEqualTo(library);
                if (!library.equals("e1")) {
                    differentFromFirstLive++;
                }
                redis.del(layout.enginesKey());
            }
            assertThat(differentFromFirstLive).as("the cases tell the rules apart").isGreaterThan(100);
        }
    }
}
