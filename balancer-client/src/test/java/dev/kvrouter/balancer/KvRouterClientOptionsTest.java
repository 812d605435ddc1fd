package dev.kvrouter.balancer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.contract.ViewLayout;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class KvRouterClientOptionsTest {

    @Test
    void theDefaultsComeFromTheViewContractAndTheirOwnConstants() {
        KvRouterClient.Options o = KvRouterClient.Options.defaults("redis://127.0.0.1:6390");
        assertThat(o.keyPrefix()).isEqualTo(ViewLayout.DEFAULT_KEY_PREFIX);
        assertThat(o.chunkTokens()).isEqualTo(ViewLayout.DEFAULT_CHUNK_TOKENS);
        assertThat(o.tagDepth()).isEqualTo(ViewLayout.DEFAULT_TAG_DEPTH);
        assertThat(o.maxViewAge()).isEqualTo(KvRouterClient.Options.DEFAULT_MAX_VIEW_AGE);
        assertThat(o.timeout()).isEqualTo(KvRouterClient.Options.DEFAULT_TIMEOUT);
        assertThat(o.clientSide()).isFalse();
        assertThat(o.reserves()).isTrue();
        assertThat(o.hold()).isZero(); // a balancer opts in to holding: it must handle Pick.held()
        assertThat(KvRouterClient.Options.builder("redis://127.0.0.1:6390").build()).isEqualTo(o);
    }

    @Test
    void eachWitherChangesItsOwnFieldsAndNothingElse() {
        KvRouterClient.Options base = KvRouterClient.Options.builder("redis://127.0.0.1:6390").timeout(Duration.ofMillis(250))
                .maxBlocks(512).build();
        KvRouterClient.Options observing = base.withKeyPrefix("t:").observing();
        assertThat(observing.reserves()).isFalse();
        assertThat(observing.keyPrefix()).isEqualTo("t:");
        assertThat(observing.toBuilder().keyPrefix(base.keyPrefix()).reserves(true).build()).isEqualTo(base);

        KvRouterClient.Options clientSide = base.withClientSidePick();
        assertThat(clientSide.clientSide()).isTrue();
        assertThat(clientSide.snapshotInterval()).isEqualTo(KvRouterClient.Options.CLIENT_SIDE_SNAPSHOT_INTERVAL);
        assertThat(clientSide.timeout()).isEqualTo(Duration.ofMillis(250));
        assertThat(clientSide.maxBlocks()).isEqualTo(512);
        assertThat(base.withMaxViewAge(Duration.ofSeconds(9)).maxViewAge()).hasSeconds(9);
        assertThat(base.holding(Duration.ofSeconds(5)).hold()).hasSeconds(5);
        assertThat(base.holding(Duration.ofSeconds(5)).toBuilder().hold(Duration.ZERO).build()).isEqualTo(base);
    }
}
