package dev.kvrouter.common.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvrouter.common.config.ClientConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

class ClientConfigOptionTest {

    @Command(name = "probe")
    static final class Probe implements Runnable {
        @Mixin
        ClientConfigOption client;

        @Override
        public void run() {}
    }

    @TempDir
    Path dir;

    @AfterEach
    void realEnvironment() {
        ClientConfigOption.environment = System.getenv();
    }

    private static ClientConfigOption parse(String... args) {
        Probe p = new Probe();
        new CommandLine(p).parseArgs(args);
        return p.client;
    }

    @Test
    void theFlagWinsOverTheVariableAndNeitherMeansPlaintext() throws Exception {
        Path flag = Files.writeString(dir.resolve("flag.properties"), "security.protocol=SSL\n");
        Path variable = Files.writeString(dir.resolve("env.properties"), "security.protocol=SASL_SSL\n");
        ClientConfigOption.environment = Map.of(ClientConfig.VARIABLE, variable.toString());

        assertThat(parse("--client-config", flag.toString()).load().kafka()).containsEntry("security.protocol", "SSL");
        assertThat(parse().load().kafka()).containsEntry("security.protocol", "SASL_SSL");
        ClientConfigOption.environment = Map.of();
        assertThat(parse().load().isEmpty()).isTrue();
    }

    @Test
    void aMissingFileSaysHowToGiveOne() {
        assertThatThrownBy(() -> parse("--client-config", dir.resolve("gone.properties").toString()).load())
                .hasMessageContaining("cannot read the client config").hasMessageContaining("--client-config");
    }
}
