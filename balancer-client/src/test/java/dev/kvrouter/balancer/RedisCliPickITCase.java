package dev.kvrouter.balancer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.LocalStackExtension;
import dev.kvrouter.stack.junit.UniqueNames;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The README's redis-cli example, run as written (only the port and the key prefix replaced, so the
 * test has a view of its own) against a real view: any language with a Redis client can pick.
 */
@ExtendWith(LocalStackExtension.class)
class RedisCliPickITCase {

    private static final Pattern BLOCK = Pattern.compile("<!-- redis-cli pick -->\\s*```bash\\n(.*?)```", Pattern.DOTALL);

    @Test
    void theReadmesRedisCliLinesPickAndRelease(StackAddresses stack) throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        Matcher m = BLOCK.matcher(readme);
        assertThat(m.find()).as("README.md has the redis-cli example between its markers").isTrue();
        String script = m.group(1);
        Matcher hashes = Pattern.compile("H1=(\\w{16}) H2=(\\w{16}) H3=(\\w{16})").matcher(script);
        assertThat(hashes.find()).isTrue();
        long[] chain = {ViewLayout.parseHex(hashes.group(1)), ViewLayout.parseHex(hashes.group(2)), ViewLayout.parseHex(hashes.group(3))};

        ViewLayout layout = new ViewLayout(UniqueNames.redisPrefix("it-cli"));
        RedisClient client = RedisClient.create(stack.redisUrl());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            RedisCommands<String, String> redis = connection.sync();
            redis.functionLoad(ViewLayout.functionLibrary(), true);
            long now = System.currentTimeMillis();
            redis.hset(layout.metaKey(), Map.of("updated_ms", Long.toString(now), "busy_factor", "2.0", "confidence_floor", "0.05"));
            redis.hset(layout.enginesKey(), Map.of(
                    "e1", new EngineEntry("READY", 1, 0, 500, 600_000, 1, false, now).encode(),
                    "e2", new EngineEntry("READY", 0, 0, 500, 600_000, 1, false, now).encode()));
            for (int position = 1; position <= 3; position++) {
                redis.hset(layout.groupKey(ViewLayout.tag(chain, position, 2)), ViewLayout.hex(chain[position - 1]),
                        ViewLayout.holder("e1", now, 1));
            }

            String port = stack.redisHostPort().substring(stack.redisHostPort().lastIndexOf(':') + 1);
            String runnable = script.replace("-p 6379", "-p " + port).replace("'kvr:", "'" + layout.prefix())
                    .replace("\"kvr:", "\"" + layout.prefix());
            List<String> out = run(runnable);
            assertThat(out.get(0)).as("the holder of all three blocks").isEqualTo("e1");
            assertThat(out.get(1)).isEqualTo("3");
            assertThat(out.get(2)).isEqualTo("AFFINITY");
            assertThat(out.get(11)).as("the best holder's match").isEqualTo("3");
            assertThat(out.get(12)).as("the wait it adds: no prefill rate, no slots known").isEqualTo("0.0");
            assertThat(out.get(13)).as("kvr_done: the reservation released").isEqualTo("1");
            assertThat(out).hasSize(14);
            assertThat(redis.hlen(layout.reservationsKey())).isZero();
        } finally {
            client.shutdown();
        }
    }

    /** Runs the lines with bash; every line redis-cli prints, in order (non-interactive: one value a line). */
    private static List<String> run(String script) throws Exception {
        Process p = new ProcessBuilder("bash", "-euo", "pipefail", "-c", script).redirectErrorStream(true).start();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("redis-cli answers").isTrue();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as("redis-cli (from the redis-tools package) ran: " + out).isZero();
        return out.lines().toList();
    }
}
