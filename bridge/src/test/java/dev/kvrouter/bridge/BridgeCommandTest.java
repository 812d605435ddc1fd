package dev.kvrouter.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.common.TopicNames;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class BridgeCommandTest {

    @Test
    void helpListsEverySettingAndTheBenchmark() {
        StringWriter out = new StringWriter();
        CommandLine cli = new CommandLine(new BridgeCommand());
        cli.setOut(new PrintWriter(out));
        assertThat(cli.execute("--help")).isZero();
        assertThat(out.toString()).contains("--config=FILE", "--bootstrap=HOST:PORT", "--schema-registry=URL", "bench");
        BridgeConfig.OPTIONS.forEach(o -> assertThat(out.toString()).contains(o.name()));
    }

    @Test
    void withoutAnEnginesFileItSaysWhatIsMissing() {
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new BridgeCommand());
        cli.setErr(new PrintWriter(err));
        assertThat(cli.execute("--bootstrap", "k:9092", "--schema-registry", "http://r")).isEqualTo(2);
        assertThat(err.toString()).contains("Missing required option: '--config=FILE'");
    }

    @Test
    void optionsBecomeSettingsAndDashDOverrides() {
        Map<String, String> s = BridgeCommand.settings(Path.of("e.yaml"), "k:9092", "http://r", "p.", null,
                Map.of("queue.capacity", "5"));
        BridgeConfig c = BridgeConfig.from(s);
        assertThat(c.kafkaBootstrap()).isEqualTo("k:9092");
        assertThat(c.schemaRegistryUrl()).isEqualTo("http://r");
        assertThat(c.topic(TopicNames.KV_EVENTS)).isEqualTo("p.kvr.kv-events");
        assertThat(c.enginesFile()).isEqualTo(Path.of("e.yaml"));
        assertThat(c.queueCapacity()).isEqualTo(5);
    }
}
