package dev.kvrouter.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class StackAddressesTest {

    @Test
    void noAddressesInTheEnvironmentMeansStartAPrivateStack() {
        assertThat(StackAddresses.fromEnv(Map.of("PATH", "/usr/bin"))).isEmpty();
    }

    @Test
    void allThreeAddressesAreReused() {
        StackAddresses a = StackAddresses.fromEnv(Map.of("KAFKA_BOOTSTRAP", "127.0.0.1:9092",
                "SCHEMA_REGISTRY_URL", "http://127.0.0.1:8081", "REDIS_URL", "redis://127.0.0.1:6380/0")).orElseThrow();
        assertThat(a.redisHostPort()).isEqualTo("127.0.0.1:6380");
        assertThat(a.toEnvLines()).isEqualTo("KAFKA_BOOTSTRAP=127.0.0.1:9092\nSCHEMA_REGISTRY_URL=http://127.0.0.1:8081\n"
                + "REDIS_URL=redis://127.0.0.1:6380/0\n");
    }

    @Test
    void halfAStackNamesEveryMissingAddress() {
        assertThatThrownBy(() -> StackAddresses.fromEnv(Map.of("KAFKA_BOOTSTRAP", "127.0.0.1:9092")))
                .hasMessageContaining("SCHEMA_REGISTRY_URL, REDIS_URL");
    }
}
