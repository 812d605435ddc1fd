package dev.kvrouter.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The benchmarks' arguments are checked before anything is started, every problem named at once. */
class BenchCommandTest {

    @Test
    void theIngestBenchNamesEveryBadArgumentAtOnceBeforeTouchingTheStack() {
        CommandLine kvr = Kvr.commandLine();
        StringWriter err = new StringWriter();
        kvr.setErr(new PrintWriter(err));
        int exit = kvr.execute("bench", "ingest", "--entries", "3", "--warm-up-entries", "-1", "--engines", "0",
                "--freshness-seconds", "0");
        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).contains("--entries 3: give at least 16", "--warm-up-entries -1: give 0 (no warm-up) or at least 16",
                "--engines 0: give at least 1", "--freshness-seconds 0: give at least 1");
    }

    @Test
    void thePickBenchNamesEveryBadArgumentAtOnceBeforeTouchingTheStack() {
        CommandLine kvr = Kvr.commandLine();
        StringWriter err = new StringWriter();
        kvr.setErr(new PrintWriter(err));
        int exit = kvr.execute("bench", "pick", "--threads", "4,0", "--iterations", "0", "--max-seconds", "0");
        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).contains("--threads [4, 0]: client counts from 1 to 256", "--iterations 0: at least 1",
                "--max-seconds 0: at least 1");
    }
}
