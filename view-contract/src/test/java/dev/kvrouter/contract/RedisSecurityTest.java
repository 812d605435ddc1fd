package dev.kvrouter.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisURI;
import io.lettuce.core.SslVerifyMode;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RedisSecurityTest {

    @Test
    void theClientConfigsRedisKeysBecomeCredentialsAndTls() {
        RedisSecurity s = RedisSecurity.fromConfig(Map.of("redis.user", "kvr", "redis.password", "pw-1", "redis.ssl", "true",
                "redis.ssl.verify", "ca"));
        RedisURI uri = s.apply(RedisURI.create("redis://127.0.0.1:6380"));
        assertThat(uri.isSsl()).isTrue();
        assertThat(uri.getVerifyMode()).isEqualTo(SslVerifyMode.CA);
        assertThat(uri.getCredentialsProvider().resolveCredentials().block().getUsername()).isEqualTo("kvr");
        assertThat(new String(uri.getCredentialsProvider().resolveCredentials().block().getPassword())).isEqualTo("pw-1");
    }

    @Test
    void aRedissUrlIsTlsWithFullVerificationWithoutAnySetting() {
        RedisURI uri = RedisSecurity.none().apply(RedisURI.create("rediss://127.0.0.1:6380"));
        assertThat(uri.isSsl()).isTrue();
        assertThat(uri.getVerifyMode()).isEqualTo(SslVerifyMode.FULL);
    }

    @Test
    void everyProblemIsReportedAtOnceWithoutTheSecret() {
        assertThatThrownBy(() -> RedisSecurity.fromConfig(Map.of("redis.user", "kvr", "redis.ssl", "yes",
                "redis.ssl.truststore.location", "/no/such/store.p12", "redis.ssl.verify", "maybe", "redis.pasword", "typo-secret")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("redis.pasword is not a Redis setting")
                .hasMessageContaining("redis.ssl must be true or false")
                .hasMessageContaining("cannot read /no/such/store.p12")
                .hasMessageContaining("redis.ssl.verify must be full, ca or none")
                .hasMessageContaining("redis.user is set without redis.password")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("typo-secret"));
    }

    @Test
    void credentialsInAUrlAreRefusedAndNeverPrinted() {
        assertThat(RedisSecurity.urlProblems("redis://kvr:pw-2@127.0.0.1:6379")).singleElement().asString()
                .contains("redis://[redacted]@127.0.0.1:6379").contains("redis.user").doesNotContain("pw-2");
        assertThat(RedisSecurity.urlProblems("redis-cluster://127.0.0.1:7000,:pw-3@127.0.0.1:7001")).singleElement().asString()
                .doesNotContain("pw-3");
        assertThat(RedisSecurity.urlProblems("rediss://127.0.0.1:6380")).isEmpty();
        assertThat(RedisSecurity.redactUrl("redis://:pw-4@h:1")).isEqualTo("redis://[redacted]@h:1");
    }

    @Test
    void printedWithoutThePassword() {
        RedisSecurity s = RedisSecurity.fromConfig(Map.of("redis.password", "pw-5"));
        assertThat(s.toString()).doesNotContain("pw-5").contains("password=[redacted]").contains("user=default");
    }
}
