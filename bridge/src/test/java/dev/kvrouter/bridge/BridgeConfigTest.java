package dev.kvrouter.bridge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.kvrouter.common.TopicNames;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BridgeConfigTest {

    @Test
    void defaultsApplyAndTopicsTakeThePrefix() {
        BridgeConfig c = BridgeConfig.from(Map.of("kafka.bootstrap", "k:9092", "schema-registry.url", "http://r",
                "engines.file", "engines.yaml", "topics.prefix", "it.", "producer.linger.ms", "20"));
        assertThat(c.topic(TopicNames.KV_EVENTS)).isEqualTo("it.kvr.kv-events");
        assertThat(c.topic(TopicNames.ENGINE_LOAD)).isEqualTo("it.kvr.engine-load");
        assertThat(c.topic(TopicNames.DEAD_LETTER)).isEqualTo("it.kvr.dead-letter");
        assertThat(c.scrapeInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(c.replayTimeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(c.queueCapacity()).isEqualTo(10_000);
        assertThat(c.queueMaxBytes()).isEqualTo(256L * 1024 * 1024);
        assertThat(c.queueEngineMaxBytes()).isEqualTo(64L * 1024 * 1024);
        assertThat(KafkaOutbox.producerConfig(c)).containsEntry("enable.idempotence", true).containsEntry("acks", "all")
                .containsEntry("max.in.flight.requests.per.connection", 1).containsEntry("linger.ms", "20");
    }

    @Test
    void oneRequestInFlightIsTheDefaultAnOperatorMayRaiseButIdempotenceStays() {
        BridgeConfig c = BridgeConfig.from(Map.of("kafka.bootstrap", "k:9092", "schema-registry.url", "http://r",
                "engines.file", "engines.yaml", "producer.max.in.flight.requests.per.connection", "5"));
        assertThat(KafkaOutbox.producerConfig(c)).containsEntry("max.in.flight.requests.per.connection", "5")
                .containsEntry("enable.idempotence", true).containsEntry("acks", "all");
    }

    @Test
    void theMetricsEndpointIsOffByDefaultAndTakesHostAndPort() {
        Map<String, String> required = Map.of("kafka.bootstrap", "k:9092", "schema-registry.url", "http://r", "engines.file", "f");
        assertThat(BridgeConfig.from(required).prometheusListen()).isEmpty();
        Map<String, String> loopback = new java.util.HashMap<>(required);
        loopback.put("prometheus.listen", "127.0.0.1:9250");
        assertThat(BridgeConfig.from(loopback).prometheusListen()).isEqualTo("127.0.0.1:9250");
        for (String wrong : java.util.List.of("9250", "127.0.0.1:", "127.0.0.1:99999", "host:port")) {
            Map<String, String> settings = new java.util.HashMap<>(required);
            settings.put("prometheus.listen", wrong);
            assertThat(catchThrowableOfType(InvalidBridgeConfigException.class, () -> BridgeConfig.from(settings)).problems())
                    .as(wrong).containsExactly("prometheus.listen '" + wrong + "' is not host:port (a port from 1 to 65535), e.g. 0.0.0.0:9250");
        }
    }

    @Test
    void theQueuesByteBoundsTakeTheLargestBatchAndAnEnginesShareIsNoMoreThanTheWhole() {
        InvalidBridgeConfigException e = catchThrowableOfType(InvalidBridgeConfigException.class, () -> BridgeConfig.from(Map.of(
                "kafka.bootstrap", "127.0.0.1:9092", "schema-registry.url", "http://r", "engines.file", "f",
                "queue.max-bytes", "1048576", "queue.engine-max-bytes", "8388608")));
        assertThat(e.problems()).hasSize(2)
                .anyMatch(p -> p.contains("queue.max-bytes 1048576 is outside 4194304.."))
                .anyMatch(p -> p.contains("queue.engine-max-bytes (8388608) must not exceed queue.max-bytes (1048576)"));
    }

    @Test
    void everyProblemIsReportedAtOnce() {
        InvalidBridgeConfigException e = catchThrowableOfType(InvalidBridgeConfigException.class, () -> BridgeConfig.from(Map.of(
                "schema-registry.url", "http://r", "engines.file", "f", "metrics.scrape-interval", "soon",
                "queue.capacity", "0", "zmq.receive-hwm", "lots", "replay.timout", "1 s", "producer.acks", "1")));
        assertThat(e.problems()).hasSize(6).anyMatch(p -> p.startsWith("kafka.bootstrap is required"))
                .anyMatch(p -> p.contains("metrics.scrape-interval must be a duration"))
                .anyMatch(p -> p.contains("queue.capacity 0 is outside"))
                .anyMatch(p -> p.contains("zmq.receive-hwm must be a whole number"))
                .anyMatch(p -> p.contains("unknown setting 'replay.timout'"))
                .anyMatch(p -> p.contains("producer.acks cannot be set"));
    }

    @Test
    void theEnginesFileIsCheckedWhole() {
        Map<String, EngineSpec> ok = EngineFleet.parse("""
                engines:
                  - id: vllm-a
                    model: llama
                    events: tcp://10.0.0.5:5557
                    replay: tcp://10.0.0.5:5558
                    metrics: http://10.0.0.5:8000/metrics
                    data-parallel-size: 2
                    role: decode
                    max-running: 256
                  - {id: sglang-b, model: qwen, events: "tcp://h:6000"}
                """, "engines.yaml");
        assertThat(ok.keySet()).containsExactly("vllm-a", "sglang-b");
        EngineSpec a = ok.get("vllm-a");
        assertThat(a.eventsEndpoint(1)).isEqualTo("tcp://10.0.0.5:5558");
        assertThat(a.replayEndpoint(1)).isEqualTo("tcp://10.0.0.5:5559");
        assertThat(a.rank(1)).isEqualTo(1);
        assertThat(a.publisher(1)).isEqualTo("vllm-a/dp1");
        assertThat(ok.get("sglang-b").rank(0)).isNull();
        assertThat(ok.get("sglang-b").topic()).isEmpty();
        assertThat(a.role()).isEqualTo(dev.kvrouter.events.EngineRole.DECODE);
        assertThat(ok.get("sglang-b").role()).isEqualTo(dev.kvrouter.events.EngineRole.BOTH);
        assertThat(a.maxRunning()).isEqualTo(256);
        assertThat(ok.get("sglang-b").maxRunning()).as("unknown unless given").isZero();

        InvalidBridgeConfigException e = catchThrowableOfType(InvalidBridgeConfigException.class, () -> EngineFleet.parse("""
                engines:
                  - id: a|b
                    events: tcp://*:5557
                    metrics: ftp://x
                    data-parallel-size: 0
                    colour: blue
                    role: chef
                    max-running: -1
                  - {id: c, model: m, events: "tcp://h:5557"}
                  - {id: c, model: m, events: "ipc:///tmp/x", data-parallel-size: 2}
                """, "engines.yaml"));
        assertThat(e.problems()).anyMatch(p -> p.contains("engines[0] id 'a|b' contains"))
                .anyMatch(p -> p.contains("engines[0] model is missing"))
                .anyMatch(p -> p.contains("engines[0] events 'tcp://*:5557' is the engine's bind address"))
                .anyMatch(p -> p.contains("engines[0] metrics 'ftp://x'"))
                .anyMatch(p -> p.contains("engines[0] data-parallel-size 0"))
                .anyMatch(p -> p.contains("engines[0] unknown key 'colour'"))
                .anyMatch(p -> p.contains("engines[0] role 'chef' is not one of [BOTH, PREFILL, DECODE]"))
                .anyMatch(p -> p.contains("engines[0] max-running must not be negative"))
                .anyMatch(p -> p.contains("engines[2] id 'c' appears twice"))
                .anyMatch(p -> p.contains("engines[2] events 'ipc:///tmp/x': only tcp endpoints"));
    }
}
