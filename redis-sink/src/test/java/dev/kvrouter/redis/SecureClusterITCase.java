package dev.kvrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvrouter.common.config.ClientConfig;
import dev.kvrouter.contract.RedisRefusedException;
import dev.kvrouter.contract.RedisSecurity;
import dev.kvrouter.contract.ViewConnection;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.stack.LocalRedisCluster;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Redis Cluster with TLS (the cluster bus too) and an ACL user, the default user off: the settings
 * that reach a standalone Redis reach every node of a cluster, and a client without them is refused
 * with what to set.
 */
class SecureClusterITCase {

    @TempDir
    Path dir;

    @Test
    void theViewsConnectionReachesEveryNodeOverTlsAsTheAclUserAndIsRefusedWithoutIt() {
        try (LocalRedisCluster cluster = LocalRedisCluster.startSecure(3, dir.resolve("cluster"))) {
            RedisSecurity security = RedisSecurity.fromConfig(ClientConfig.load(cluster.clientConfig()).redis());
            assertThat(security.tls()).isTrue();
            assertThat(security.user()).isEqualTo("kvr");
            try (ViewConnection c = open(cluster, security)) {
                assertThat(c.cluster()).isTrue();
                c.loadFunctions(ViewLayout.functionLibrary());
                // Keys in every slot range, so every primary answers over TLS as the ACL user.
                for (int i = 0; i < 64; i++) {
                    c.sync().set("it-secure:" + i, Integer.toString(i));
                }
                for (int i = 0; i < 64; i++) {
                    assertThat(c.sync().get("it-secure:" + i)).isEqualTo(Integer.toString(i));
                }
                assertThat(c.functionsLoaded("kvrouter")).isTrue();
            }

            RedisSecurity noPassword = new RedisSecurity(null, null, true, security.truststore(), security.truststorePassword(), "full");
            assertThatThrownBy(() -> open(cluster, noPassword).close())
                    .isInstanceOf(RedisRefusedException.class)
                    .hasMessageContaining("requires authentication").hasMessageContaining("redis.password");
            RedisSecurity wrong = new RedisSecurity("kvr", "not-it", true, security.truststore(), security.truststorePassword(), "full");
            assertThatThrownBy(() -> open(cluster, wrong).close())
                    .isInstanceOf(RedisRefusedException.class)
                    .hasMessageContaining("refused the credentials of user 'kvr'")
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain("not-it"));
        }
    }

    private static ViewConnection open(LocalRedisCluster cluster, RedisSecurity security) {
        return ViewConnection.open(cluster.url(), security, Duration.ofSeconds(2), Duration.ofSeconds(5), 64);
    }
}
