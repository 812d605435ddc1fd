package dev.kvrouter.common.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

class ServiceOptionTest {

    @Command(name = "probe")
    static final class Probe implements Runnable {
        @Mixin
        KafkaOption kafka;

        @Mixin
        RegistryOption registry;

        @Mixin
        RedisOption redis;

        @Mixin
        TopicsPrefixOption prefix;

        @Override
        public void run() {}
    }

    private static Probe parse(String... args) {
        Probe p = new Probe();
        new CommandLine(p).parseArgs(args);
        return p;
    }

    @AfterEach
    void realEnvironment() {
        ServiceOption.environment = System.getenv();
    }

    @Test
    void aFlagWinsOverItsVariableAndTheVariableFillsIn() {
        ServiceOption.environment = Map.of("KAFKA_BOOTSTRAP", "127.0.0.1:9092", "REDIS_URL", "redis://127.0.0.1:6390");
        Probe p = parse("--bootstrap", "127.0.0.1:19092", "--topics-prefix", "t.");
        assertThat(p.kafka.value()).isEqualTo("127.0.0.1:19092");
        assertThat(p.redis.value()).isEqualTo("redis://127.0.0.1:6390");
        assertThat(p.prefix.value()).isEqualTo("t.");
        assertThat(parse().prefix.value()).isEmpty();
    }

    @Test
    void everyMissingServiceIsNamedAtOnceWithItsFlagAndVariable() {
        ServiceOption.environment = Map.of("REDIS_URL", "");
        Probe p = parse();
        assertThatThrownBy(() -> ServiceOption.requireAll(p.kafka, p.registry, p.redis))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--bootstrap HOST:PORT (or $KAFKA_BOOTSTRAP)")
                .hasMessageContaining("--schema-registry URL (or $SCHEMA_REGISTRY_URL)")
                .hasMessageContaining("--redis-url URL (or $REDIS_URL)")
                .hasMessageContaining("./kvr stack up");
        assertThatThrownBy(p.kafka::value).hasMessageNotContaining("--redis-url");
    }

    @Command(name = "topics-probe")
    static final class TopicsProbe implements Runnable {
        @Mixin
        AvroTopicsOptions topics;

        @Override
        public void run() {}
    }

    @Test
    void theAvroTopicsTrioParsesAsOneMixinAndNamesBothMissingServices() {
        ServiceOption.environment = Map.of("SCHEMA_REGISTRY_URL", "http://127.0.0.1:8081");
        TopicsProbe p = new TopicsProbe();
        new CommandLine(p).parseArgs("--bootstrap", "127.0.0.1:19092", "--topics-prefix", "run.");
        assertThat(p.topics.kafka.value()).isEqualTo("127.0.0.1:19092");
        assertThat(p.topics.registry.value()).isEqualTo("http://127.0.0.1:8081");
        assertThat(p.topics.prefix()).isEqualTo("run.");

        ServiceOption.environment = Map.of();
        TopicsProbe none = new TopicsProbe();
        new CommandLine(none).parseArgs();
        assertThat(none.topics.prefix()).isEmpty();
        assertThatThrownBy(none.topics::requireServices).hasMessageContaining("--bootstrap HOST:PORT (or $KAFKA_BOOTSTRAP)")
                .hasMessageContaining("--schema-registry URL (or $SCHEMA_REGISTRY_URL)");
    }
}
