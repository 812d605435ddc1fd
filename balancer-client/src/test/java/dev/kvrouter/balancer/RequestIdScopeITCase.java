package dev.kvrouter.balancer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.balancer.KvRouterClient.Pick;
import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.contract.ViewLayout;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Request ids are the balancers' own (nginx's $request_id, an upstream's X-Request-Id, a counter):
 * two balancers using the same id must not take over each other's reservation or release it. Each
 * client reserves under its own scope. On a Redis of its own.
 */
class RequestIdScopeITCase {

    @TempDir
    Path dir;

    private PrivateViewRedis view;
    private RedisCommands<String, String> redis;
    private final ViewLayout layout = new ViewLayout("scope:");
    private final long[] prompt = {1, 2, 3};

    @BeforeEach
    void setUp() {
        view = new PrivateViewRedis(dir.resolve("redis"));
        redis = view.redis;
        long now = System.currentTimeMillis();
        redis.hset(layout.metaKey(), Map.of("updated_ms", Long.toString(now + 3_600_000), "busy_factor", "2.0", "confidence_floor", "0.05"));
        redis.hset(layout.enginesKey(), "e1", new EngineEntry("READY", 0, 0, 500, 600_000, 1, false, now).encode());
    }

    @AfterEach
    void tearDown() {
        view.close();
    }

    private KvRouterClient balancer(String id) {
        return new KvRouterClient(KvRouterClient.Options.builder(view.url()).keyPrefix(layout.prefix()).balancerId(id).build());
    }

    @Test
    void twoBalancersUsingTheSameRequestIdKeepTwoReservationsAndEachReleasesOnlyItsOwn() {
        try (KvRouterClient a = balancer("gw-a"); KvRouterClient b = balancer("gw-b")) {
            Pick fromA = a.pick(prompt, null, null, "req-1");
            Pick fromB = b.pick(prompt, null, null, "req-1");
            assertThat(fromA.requestId()).as("the caller's id comes back as given").isEqualTo("req-1");
            assertThat(fromB.requestId()).isEqualTo("req-1");
            assertThat(redis.hlen(layout.reservationsKey())).as("two requests, two reservations").isEqualTo(2);
            assertThat(redis.hget(layout.reservationsKey(), a.reservationId("req-1"))).startsWith("e1|");
            assertThat(a.reservationId("req-1")).isNotEqualTo(b.reservationId("req-1"));

            assertThat(a.done("req-1")).isTrue();
            assertThat(redis.hget(layout.reservationsKey(), b.reservationId("req-1"))).as("b's is still there").startsWith("e1|");
            assertThat(b.done("req-1")).as("b releases its own").isTrue();
            assertThat(redis.hlen(layout.reservationsKey())).isZero();
        }
    }

    @Test
    void aClientGivenNoBalancerIdGetsAScopeOfItsOwn() {
        try (KvRouterClient a = new KvRouterClient(KvRouterClient.Options.builder(view.url()).keyPrefix(layout.prefix()).build());
             KvRouterClient b = new KvRouterClient(KvRouterClient.Options.builder(view.url()).keyPrefix(layout.prefix()).build())) {
            a.pick(prompt, null, null, "req-1");
            b.pick(prompt, null, null, "req-1");
            assertThat(redis.hlen(layout.reservationsKey())).isEqualTo(2);
            assertThat(a.reservationId("req-1")).endsWith("req-1").isNotEqualTo(b.reservationId("req-1"));
        }
    }
}
