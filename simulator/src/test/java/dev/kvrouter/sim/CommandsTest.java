package dev.kvrouter.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class CommandsTest {

    private static String run(Object command, String... args) {
        StringWriter out = new StringWriter();
        CommandLine cli = new CommandLine(command);
        cli.setOut(new PrintWriter(out));
        int code = cli.execute(args);
        assertThat(code).as("exit code; output:%n%s", out).isZero();
        return out.toString();
    }

    @Test
    void enginesReportTheirSlotsAndBalancersHoldUnlessTurnedOff() {
        SimCommand defaults = new SimCommand();
        new CommandLine(defaults).parseArgs();
        assertThat(defaults.fleet.engineConfig().reportsSlots()).isTrue();
        assertThat(defaults.fleet.viewHold).isEqualTo("30s");
        SimCommand off = new SimCommand();
        new CommandLine(off).parseArgs("--no-report-slots", "--view-hold", "0ms");
        assertThat(off.fleet.engineConfig().reportsSlots()).isFalse();
        assertThat(off.fleet.viewHold).isEqualTo("0ms");
    }

    @Test
    void replayReportsEveryPolicyBesideTheTraceBound(@TempDir Path dir) throws Exception {
        Path trace = dir.resolve("t.jsonl");
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 40; i++) {
            lines.append(String.format("{\"timestamp\": %d, \"input_length\": %d, \"output_length\": 20, \"hash_ids\": [1, %d, %d]}%n",
                    i * 500, 1_500, 100 + i % 5, 1_000 + i));
        }
        Files.writeString(trace, lines);
        String out = run(new ReplayCommand(), "--trace", trace.toString(), "--engines", "2", "--capacity", "1024", "--compression", "2",
                "--out", dir.resolve("report").toString());
        assertThat(out).contains("unbounded-cache bound", "round-robin", "oracle", "report: ");
        assertThat(dir.resolve("report/report.md")).exists();
        assertThat(dir.resolve("report/block-hit-rate.png")).exists();
    }

    @Test
    void simRunsAShortWorkloadWithFailures(@TempDir Path dir) throws Exception {
        String out = run(new SimCommand(), "--workload", "burst", "--duration", "20s", "--engines", "3", "--policies", "least-loaded,sglang",
                "--failures", "kill:1@5,gap:0@1/2", "--out", dir.toString());
        assertThat(out).contains("least-loaded", "sglang").doesNotContain("oracle");
        assertThat(Files.readString(dir.resolve("report.md"))).contains("engine 1 dies at 5 s", "| burst | sglang |");
    }

    @Test
    void theReportedCommandLineNamesTheCommandOnce() {
        assertThat(FleetOptions.commandLine("sim", java.util.List.of("sim", "--seed", "2"))).isEqualTo("kvr sim --seed 2");
        assertThat(FleetOptions.commandLine("sim", java.util.List.of("--seed", "2"))).isEqualTo("kvr sim --seed 2");
    }

    /** What 'kvr sim' prints to stderr for these arguments, as Kvr's handler prints a failed command: its message. */
    private static String simError(int expectedExit, String... args) {
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new SimCommand());
        cli.setErr(new PrintWriter(err));
        cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
            cmd.getErr().println(e.getMessage());
            return 1;
        });
        assertThat(cli.execute(args)).isEqualTo(expectedExit);
        return err.toString();
    }

    @Test
    void theViewPolicyNeedsItsFleetPublishedAndAPacedClock() {
        assertThat(simError(1, "--policies", "view,least-loaded", "--duration", "5s")).contains("--publish view", "--speed");
    }

    @Test
    void aDurationWithoutItsUnitIsRefusedSayingWhatToWrite() {
        assertThat(simError(1, "--duration", "90")).contains("not a duration: '90'", "e.g. 500ms, 90s, 10min");
    }
}
