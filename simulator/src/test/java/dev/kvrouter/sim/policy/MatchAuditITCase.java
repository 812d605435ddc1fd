package dev.kvrouter.sim.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.balancer.KvRouterClient;
import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.LocalStackExtension;
import dev.kvrouter.stack.junit.UniqueNames;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The match audit on a real Redis view: a hole between the search's probes is counted, a view without one is not. */
@ExtendWith(LocalStackExtension.class)
class MatchAuditITCase {

    @Test
    void aHoleTheSearchPassesOverIsCountedAndAWholePrefixIsNot(StackAddresses stack) {
        ViewLayout layout = new ViewLayout(UniqueNames.redisPrefix("it-audit"));
        long[] chain = new CanonicalBlockHasher(16).chain("m", null, IntStream.range(0, 8 * 16).toArray(), List.of());
        long now = System.currentTimeMillis();
        RedisClient client = RedisClient.create(stack.redisUrl());
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            RedisCommands<String, String> redis = c.sync();
            redis.hset(layout.metaKey(), Map.of("updated_ms", Long.toString(now), "confidence_floor", "0.05"));
            redis.hset(layout.enginesKey(), Map.of(
                    "e1", new EngineEntry("READY", 0, 0, 500, 600_000, 1, false, now).encode(),
                    "e2", new EngineEntry("READY", 0, 0, 500, 600_000, 1, false, now).encode()));
            for (int position = 1; position <= 8; position++) {
                // e1 holds all 8 blocks; e2 all but the 3rd, which lies between the probes at 2 and 4.
                String value = ViewLayout.holder("e1", now, 1) + (position == 3 ? "" : "," + ViewLayout.holder("e2", now, 1));
                redis.hset(layout.groupKey(ViewLayout.tag(chain, position, 2)), ViewLayout.hex(chain[position - 1]), value);
            }
            KvRouterClient.Options options = KvRouterClient.Options.defaults(stack.redisUrl()).withKeyPrefix(layout.prefix());
            try (MatchAudit audit = new MatchAudit(options, new PrintStream(printed, true, StandardCharsets.UTF_8))) {
                audit.check(chain);
                audit.check(java.util.Arrays.copyOf(chain, 2)); // the first two blocks: no hole within them
            }
        } finally {
            client.shutdown();
        }
        assertThat(printed.toString(StandardCharsets.UTF_8))
                .contains("match audit: 2 prompts, 4 holder runs; the search found 1 runs longer than the consecutive read")
                .contains("1 prompts, 50.000 %; the best run differed on 0 prompts")
                .contains("6 blocks over in all");
    }
}
