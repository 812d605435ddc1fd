package dev.kvrouter.common.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClientConfigTest {

    @TempDir
    Path dir;

    private Path file(String name, String content) throws Exception {
        Path f = dir.resolve(name);
        Files.writeString(f, content);
        return f;
    }

    @Test
    void secretsComeFromTheEnvironmentAndFilesWholeOrInPart() throws Exception {
        Path secret = file("kafka-password", "s3cret\n");
        Path config = file("client.properties", """
                security.protocol=SASL_SSL
                sasl.mechanism=SCRAM-SHA-512
                sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="kvr" password="${file:%s}";
                basic.auth.user.info=kvr:${env:REGISTRY_PASSWORD}
                schema.registry.ssl.truststore.location=/etc/kvr/ca.p12
                redis.user=kvr
                redis.password=${env:REDIS_PASSWORD}
                """.formatted(secret));

        ClientConfig c = ClientConfig.load(config, Map.of("REGISTRY_PASSWORD", "reg-pw", "REDIS_PASSWORD", "redis-pw")::get);

        assertThat(c.kafka()).containsOnlyKeys("security.protocol", "sasl.mechanism", "sasl.jaas.config");
        assertThat(c.kafka().get("sasl.jaas.config").toString()).endsWith("password=\"s3cret\";");
        assertThat(c.registry()).containsEntry("basic.auth.user.info", "kvr:reg-pw")
                .containsEntry("schema.registry.ssl.truststore.location", "/etc/kvr/ca.p12").hasSize(2);
        assertThat(c.redis()).containsEntry("redis.user", "kvr").containsEntry("redis.password", "redis-pw").hasSize(2);
    }

    @Test
    void printedSettingsNeverShowASecret() throws Exception {
        ClientConfig c = ClientConfig.load(file("c.properties", """
                sasl.jaas.config=x password="p1";
                ssl.keystore.password=p2
                basic.auth.user.info=u:p3
                redis.password=p4
                ssl.key.password=p5
                security.protocol=SSL
                """), k -> null);

        assertThat(c.toString()).doesNotContain("p1", "p2", "p3", "p4", "p5").contains("security.protocol=SSL", ClientConfig.REDACTED);
        assertThat(ClientConfig.redact(c.redis())).isEqualTo("{redis.password=" + ClientConfig.REDACTED + "}");
    }

    @Test
    void everyProblemIsReportedAtOnceWithoutAValue() throws Exception {
        Path config = file("bad.properties", """
                redis.password=${env:NOT_SET_ANYWHERE}
                sasl.jaas.config=password="${file:%s}";
                ssl.truststore.password=${vault:kv/kafka}
                """.formatted(dir.resolve("missing")));

        assertThatThrownBy(() -> ClientConfig.load(config, k -> null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("has 3 problems")
                .hasMessageContaining("redis.password: the environment variable NOT_SET_ANYWHERE is not set")
                .hasMessageContaining("sasl.jaas.config: cannot read the file " + dir.resolve("missing"))
                .hasMessageContaining("ssl.truststore.password: unknown reference ${vault:...}");
    }

    @Test
    void anUnreadableFileSaysWhatToGive() {
        assertThatThrownBy(() -> ClientConfig.load(dir.resolve("nope.properties")))
                .hasMessageContaining("cannot read the client config")
                .hasMessageContaining("--client-config or $" + ClientConfig.VARIABLE);
    }

    @Test
    void noneIsEmpty() {
        assertThat(ClientConfig.none().isEmpty()).isTrue();
        assertThat(ClientConfig.none().kafka()).isEmpty();
    }
}
