package dev.kvrouter.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Help is a new user's first look: every command's --help renders, and without a picocli warning. */
class KvrHelpTest {

    @Test
    void everyCommandsHelpRendersWithoutAWarning() {
        List<CommandLine> commands = new ArrayList<>();
        collect(Kvr.commandLine(), commands);
        assertThat(commands).extracting(CommandLine::getCommandName).contains("demo", "run", "sim", "replay", "bridge");
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            for (CommandLine c : commands) {
                assertThat(c.getUsageMessage()).as(c.getCommandSpec().qualifiedName()).contains("Usage:");
            }
        } finally {
            System.setErr(err);
        }
        assertThat(captured.toString(StandardCharsets.UTF_8)).as("what picocli printed while rendering help").doesNotContain("WARN");
    }

    private static void collect(CommandLine c, List<CommandLine> into) {
        into.add(c);
        c.getSubcommands().values().forEach(sub -> collect(sub, into));
    }
}
