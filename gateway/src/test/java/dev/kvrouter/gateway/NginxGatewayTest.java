package dev.kvrouter.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NginxGatewayTest {

    private final NginxGateway gateway = NginxGateway.of(8080, Map.of("e1", "127.0.0.1:9001", "e2", "127.0.0.1:9002"), "127.0.0.1", 6379, "m");

    @Test
    void everyProblemIsReportedAtOnce() {
        assertThatThrownBy(() -> new NginxGateway(0, Map.of("a,b", "nowhere"), "127.0.0.1", 6379, Duration.ZERO, "kvr{x}:", "", 0,
                Duration.ofSeconds(2), Duration.ofMinutes(11), Duration.ofSeconds(-1), "X-Client-Id", "Bad Header", 10, 0, Duration.ofMinutes(1), null,
                new NginxGateway.RedisAccess("kvr", null, true, null, true, true)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("the gateway's configuration has 15 problem(s)")
                .hasMessageContaining("listen port").hasMessageContaining("engine id 'a,b'").hasMessageContaining("host:port, got 'nowhere'")
                .hasMessageContaining("Redis timeout").hasMessageContaining("key prefix").hasMessageContaining("model")
                .hasMessageContaining("chunk tokens").hasMessageContaining("hold").hasMessageContaining("fail timeout").hasMessageContaining("'Bad Header'")
                .hasMessageContaining("max body").hasMessageContaining("workers").hasMessageContaining("balancer")
                .hasMessageContaining("Redis user kvr without a password file").hasMessageContaining("redis.ssl.ca.location");
    }

    @Test
    void stringsReachLuaAsLiteralsWhateverTheyHold() {
        assertThat(NginxGateway.lua("plain")).isEqualTo("\"plain\"");
        assertThat(NginxGateway.lua("a\"b\\c\n]]")).isEqualTo("\"a\\\"b\\\\c\\010]]\"");
        assertThat(NginxGateway.lua("é")).isEqualTo("\"\\195\\169\"");
    }

    @Test
    void theRenderedConfigurationHasNoPlaceholderLeftAndTheLibraryBesideIt(@TempDir Path prefix) {
        String conf = gateway.withKeyPrefix("run-1:").render(prefix, Path.of("/usr/lib/nginx/modules"));
        assertThat(conf).doesNotContain("${").contains("listen 127.0.0.1:8080;").contains("client_max_body_size 8388608;")
                .contains("client_body_buffer_size 8388608;").contains("key_prefix = \"run-1:\"").contains("fail_timeout_ms = 10000")
                .contains("timeout_ms = " + NginxGateway.DEFAULT_REDIS_TIMEOUT.toMillis())
                .contains("{id = \"e1\", address = \"127.0.0.1:9001\"}, {id = \"e2\", address = \"127.0.0.1:9002\"}")
                .contains("lua_package_path \"" + prefix.resolve("lua") + "/?.lua;;\"");
        for (String file : NginxGateway.LUA_FILES) {
            assertThat(Files.exists(prefix.resolve("lua").resolve(file))).as(file).isTrue();
        }
    }

    @Test
    void nginxsOwnBalancersRenderAsStockNginxWithNoLuaAndNameTheUpstream(@TempDir Path prefix) {
        String leastConn = gateway.withBalancer(NginxGateway.Balancer.LEAST_CONN).render(prefix, Path.of("/usr/lib/nginx/modules"));
        assertThat(leastConn).doesNotContain("${").doesNotContain("lua").contains("least_conn;")
                .contains("server 127.0.0.1:9001; # e1").contains("server 127.0.0.1:9002; # e2")
                .contains("add_header X-Kvr-Upstream $upstream_addr always;");
        assertThat(Files.exists(prefix.resolve("lua"))).as("no Lua library for stock nginx").isFalse();
        assertThat(gateway.withBalancer(NginxGateway.Balancer.CLIENT_HASH).render(prefix, Path.of("/m")))
                .contains("hash $http_x_client_id consistent;");
        assertThat(gateway.withBalancer(NginxGateway.Balancer.ROUND_ROBIN).render(prefix, Path.of("/m")))
                .doesNotContain("least_conn").doesNotContain("hash $");
        assertThat(NginxGateway.Balancer.of("least-conn")).isEqualTo(NginxGateway.Balancer.LEAST_CONN);
        assertThatThrownBy(() -> NginxGateway.Balancer.of("random")).hasMessageContaining("one of view, round-robin, least-conn, client-hash");
        // The view's gateway names the upstream too.
        assertThat(gateway.render(prefix, Path.of("/m"))).contains("add_header X-Kvr-Upstream $upstream_addr always;");
    }
}
