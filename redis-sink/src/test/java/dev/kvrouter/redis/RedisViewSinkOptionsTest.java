package dev.kvrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.contract.ViewLayout;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RedisViewSinkOptionsTest {

    @Test
    void theDefaultsAreTheViewContractsAndUsable() {
        RedisViewSinkOptions o = RedisViewSinkOptions.defaults("redis://127.0.0.1:6390");
        assertThat(o.problems()).isEmpty();
        assertThat(o.keyPrefix()).isEqualTo(ViewLayout.DEFAULT_KEY_PREFIX);
        assertThat(o.chunkTokens()).isEqualTo(ViewLayout.DEFAULT_CHUNK_TOKENS);
        assertThat(o.clientMinInflight()).isEqualTo(ViewLayout.DEFAULT_CLIENT_MIN_INFLIGHT);
        assertThat(o.toBuilder().build()).as("a copy with nothing changed").isEqualTo(o);
    }

    @Test
    void eachWitherChangesItsOwnFieldsOnly() {
        RedisViewSinkOptions o = RedisViewSinkOptions.defaults("redis://127.0.0.1:6390");
        RedisViewSinkOptions changed = o.withKeyPrefix("p:").withClientCap(0.25, 3).withFlushInterval(20)
                .withView(32, 1, 3.0, 0.1, 9_000).withMeta(Map.of("a", "1"));
        assertThat(changed).isEqualTo(RedisViewSinkOptions.builder("redis://127.0.0.1:6390").keyPrefix("p:").clientCap(0.25)
                .clientMinInflight(3).flushIntervalMs(20).chunkTokens(32).tagDepth(1).busyFactor(3.0).confidenceFloor(0.1)
                .viewTtlMs(9_000).extraMeta(new java.util.TreeMap<>(Map.of("a", "1"))).build());
        assertThat(changed.batchSize()).isEqualTo(o.batchSize());
        assertThat(o.extraMeta()).as("the original keeps its meta").isEmpty();
    }

    @Test
    void everyProblemIsReportedAtOnce() {
        RedisViewSinkOptions bad = RedisViewSinkOptions.builder("http://x").keyPrefix("{x}").batchSize(0).busyFactor(1)
                .clientCap(2).confidenceFloor(0).build();
        assertThat(bad.problems()).hasSize(6).anySatisfy(p -> assertThat(p).contains("redis url"))
                .anySatisfy(p -> assertThat(p).contains("key prefix")).anySatisfy(p -> assertThat(p).contains("batch size"));
    }
}
