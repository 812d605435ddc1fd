package dev.kvrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.stack.LocalRedis;
import dev.kvrouter.stack.LocalRedisCluster;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each way a real Redis loses the view, as the job's probe sees it: a private redis-server, so
 * flushing it, deleting its functions and restarting it touch no other test.
 */
class ViewLossDetectorITCase {

    @TempDir
    Path dir;

    @Test
    void onARedisClusterTheDetectorLoadsTheFunctionsOnEveryPrimaryAndKnowsThePrimaries() throws Exception {
        try (LocalRedisCluster cluster = LocalRedisCluster.start(3, dir.resolve("cluster"));
             ViewLossDetector detector = new ViewLossDetector(RedisViewSinkOptions.defaults(cluster.url()).withKeyPrefix("t:"))) {
            assertThat(detector.check()).hasValueSatisfying(why -> assertThat(why).contains("the job started")
                    .contains("function library was missing"));
            assertThat(detector.check()).as("the same primaries, the functions on each").isEmpty();
            for (int port : cluster.ports()) {
                RedisClient client = RedisClient.create("redis://127.0.0.1:" + port);
                try (StatefulRedisConnection<String, String> node = client.connect()) {
                    assertThat(node.sync().functionList(ViewLayout.FUNCTION_LIBRARY)).as("library on %d", port).hasSize(1);
                } finally {
                    client.shutdown();
                }
            }
        }
    }

    @Test
    void startFlushLostFunctionsAndRestartEachAskForTheViewAgainAndNothingElseDoes() throws Exception {
        try (LocalRedis redis = LocalRedis.start(dir);
             ViewLossDetector detector = new ViewLossDetector(RedisViewSinkOptions.defaults(redis.url()).withKeyPrefix("t:"))) {
            ViewLayout layout = new ViewLayout("t:");
            assertThat(detector.check()).as("the job started: state may hold what Redis lost meanwhile")
                    .hasValueSatisfying(why -> assertThat(why).contains("the job started")
                            .contains("function library was missing"));
            assertThat(detector.check()).as("nothing happened").isEmpty();
            RedisClient client = RedisClient.create(redis.url());
            try (StatefulRedisConnection<String, String> connection = client.connect()) {
                RedisCommands<String, String> sync = connection.sync();
                assertThat(sync.<Long>fcallReadOnly(ViewLayout.LAYOUT_FUNCTION, ScriptOutputType.INTEGER))
                        .as("the library the detector loaded").isEqualTo(ViewLayout.LAYOUT_VERSION);
                assertThat(sync.hget(layout.metaKey(), ViewLossDetector.RESYNCED_FIELD)).isNotNull();

                // The sink writes its meta fields again within a flush: only the stamp tells a flush happened.
                sync.flushall();
                sync.hset(layout.metaKey(), "updated_ms", Long.toString(System.currentTimeMillis()));
                assertThat(detector.check()).hasValueSatisfying(why -> assertThat(why).contains("flushed or expired"));
                assertThat(detector.check()).isEmpty();

                sync.functionFlush(io.lettuce.core.FlushMode.SYNC);
                assertThat(detector.check()).hasValueSatisfying(why -> assertThat(why).isEqualTo(
                        "the function library was missing (loaded again)"));
                assertThat(sync.<Long>fcallReadOnly(ViewLayout.LAYOUT_FUNCTION, ScriptOutputType.INTEGER))
                        .isEqualTo(ViewLayout.LAYOUT_VERSION);
            } finally {
                client.shutdown();
            }

            redis.stop();
            assertThat(detector.check()).as("Redis does not answer: no verdict yet").isEmpty();
            redis.restartEmpty();
            Optional<String> afterRestart = Optional.empty();
            for (int i = 0; i < 50 && afterRestart.isEmpty(); i++) { // the connection comes back by itself
                afterRestart = detector.check();
                Thread.sleep(100);
            }
            assertThat(afterRestart).hasValueSatisfying(why -> assertThat(why).contains("Redis restarted or failed over")
                    .contains("function library was missing"));
            assertThat(detector.check()).isEmpty();
        }
    }
}
