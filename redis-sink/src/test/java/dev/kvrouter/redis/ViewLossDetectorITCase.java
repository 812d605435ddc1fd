package dev.kvrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvrouter.contract.ViewLayout;
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
    void aRefusalIsNotRedisAwayTheProbeFailsSayingWhatToGrant() {
        try (LocalRedis redis = LocalRedis.start(dir)) {
            RedisClient admin = RedisClient.create(redis.url());
            try (StatefulRedisConnection<String, String> connection = admin.connect()) {
                // A user that may write keys but not load functions: the writer would work, the library never come.
                connection.sync().aclSetuser("job", io.lettuce.core.AclSetuserArgs.Builder.on().addPassword("pw-9").allKeys().allChannels()
                        .allCommands().removeCategory(io.lettuce.core.AclCategory.SCRIPTING));
            } finally {
                admin.shutdown();
            }
            try (ViewLossDetector detector = new ViewLossDetector(RedisViewSinkOptions.defaults("redis://job:pw-9@127.0.0.1:" + redis.port())
                    .withKeyPrefix("t:"))) {
                assertThatThrownBy(detector::check).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("Redis refused the view probe").hasMessageContaining("NOPERM")
                        .hasMessageContaining("+@scripting").satisfies(e -> assertThat(e.getMessage()).doesNotContain("pw-9"));
            }
            try (ViewLossDetector wrongPassword = new ViewLossDetector(RedisViewSinkOptions.defaults("redis://job:nope@127.0.0.1:" + redis.port())
                    .withKeyPrefix("t:"))) {
                assertThatThrownBy(wrongPassword::check).as("a wrong password: refused at the login, saying what to check")
                        .hasMessageContaining("refused the credentials").hasMessageNotContaining("nope");
            }
        }
    }

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
    void aClusterFailoverAsksForTheViewAgain() throws Exception {
        try (LocalRedisCluster cluster = LocalRedisCluster.start(3, 1, dir.resolve("failover"));
             ViewLossDetector detector = new ViewLossDetector(RedisViewSinkOptions.defaults(cluster.url()).withKeyPrefix("t:"))) {
            int replica = cluster.replicaInSync(); // a new cluster's replicas first sync with their primaries
            Optional<String> first = awaitTrue(() -> detector.check(), "the detector's first look");
            assertThat(first.get()).contains("the job started");
            assertThat(detector.check()).isEmpty();
            cluster.takeOver(replica); // the replica takes its primary's slots
            Optional<String> afterFailover = awaitTrue(() -> detector.check(), "the detector sees the failover");
            assertThat(afterFailover.get()).contains("failed over");
            // The topology may take a look or two more to settle (each change asks again, harmlessly); then quiet.
            int quiet = 0;
            for (int i = 0; i < 100 && quiet < 3; i++) {
                quiet = detector.check().isEmpty() ? quiet + 1 : 0;
                Thread.sleep(200);
            }
            assertThat(quiet).as("the detector quiet once the cluster settled").isEqualTo(3);
        }
    }

    /** Polls {@code look} every 200 ms until it answers, for at most 30 s. */
    private static <T> Optional<T> awaitTrue(java.util.function.Supplier<Optional<T>> look, String what) throws InterruptedException {
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(30).toNanos();
        Optional<T> answer = look.get();
        while (answer.isEmpty()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            Thread.sleep(200);
            answer = look.get();
        }
        return answer;
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
