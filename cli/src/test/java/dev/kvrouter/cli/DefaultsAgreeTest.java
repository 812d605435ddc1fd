package dev.kvrouter.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.balancer.KvRouterClient;
import dev.kvrouter.gateway.NginxGateway;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The two balancers the project ships, the Java client and the nginx gateway, wait as long for a pick by default. */
class DefaultsAgreeTest {

    @Test
    void theGatewayAndTheJavaClientWaitAsLongForAPick() {
        assertThat(NginxGateway.DEFAULT_REDIS_TIMEOUT).isEqualTo(KvRouterClient.Options.DEFAULT_TIMEOUT);
        assertThat(NginxGateway.of(8080, Map.of("e1", "127.0.0.1:9001"), "127.0.0.1", 6379, "m").redisTimeout())
                .isEqualTo(KvRouterClient.Options.DEFAULT_TIMEOUT);
    }
}
