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
                Duration.ofSeconds(2), Duration.ofMinutes(11), "X-Client-Id", "Bad Header", 10, 0, Duration.ofMinutes(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("the gateway's configuration has 11 problem(s)")
                .hasMessageContaining("listen port").hasMessageContaining("engine id 'a,b'").hasMessageContaining("host:port, got 'nowhere'")
                .hasMessageContaining("Redis timeout").hasMessageContaining("key prefix").hasMessageContaining("model")
                .hasMessageContaining("chunk tokens").hasMessageContaining("hold").hasMessageContaining("'Bad Header'")
                .hasMessageContaining("max body").hasMessageContaining("workers");
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
                .contains("client_body_buffer_size 8388608;").contains("key_prefix = \"run-1:\"")
                .contains("{id = \"e1\", address = \"127.0.0.1:9001\"}, {id = \"e2\", address = \"127.0.0.1:9002\"}")
                .contains("lua_package_path \"" + prefix.resolve("lua") + "/?.lua;;\"");
        for (String file : NginxGateway.LUA_FILES) {
            assertThat(Files.exists(prefix.resolve("lua").resolve(file))).as(file).isTrue();
        }
    }
}
