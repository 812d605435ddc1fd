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
        assertThat(defaults.fleet.engineConfig(NO_REQUESTS).reportsSlots()).isTrue();
        assertThat(defaults.fleet.viewHold).isEqualTo("30s");
        SimCommand off = new SimCommand();
        new CommandLine(off).parseArgs("--no-report-slots", "--view-hold", "0ms");
        assertThat(off.fleet.engineConfig(NO_REQUESTS).reportsSlots()).isFalse();
        assertThat(off.fleet.viewHold).isEqualTo("0ms");
    }

    private static final dev.kvrouter.sim.workload.Workload NO_REQUESTS = new dev.kvrouter.sim.workload.Workload() {
        @Override
        public String name() {
            return "none";
        }

        @Override
        public java.util.Iterator<dev.kvrouter.sim.workload.SimRequest> requests() {
            return java.util.Collections.emptyIterator();
        }
    };

    @Test
    void capacityIsBlocksOrAMultipleOfTheWorkloadsMedianPrompt() {
        var w = new dev.kvrouter.sim.workload.SyntheticWorkload("long-prefix", dev.kvrouter.sim.workload.SyntheticWorkload.Settings.defaults(120, 1));
        int median = w.medianPromptBlocks(16);
        assertThat(median).as("long-prefix prompts are 10k-40k tokens").isBetween(10_000 / 16, 42_000 / 16);
        assertThat(FleetOptions.capacityBlocks("4x", w, 16)).isEqualTo(4 * median);
        assertThat(FleetOptions.capacityBlocks("0.5x", w, 16)).isEqualTo(Math.round(0.5 * median));
        assertThat(FleetOptions.capacityBlocks("8192", w, 16)).isEqualTo(8192);
        for (String bad : new String[] {"0", "-3", "0x", "x", "4y", "1e9x", ""}) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> FleetOptions.capacityBlocks(bad, w, 16)).as(bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--capacity").hasMessageContaining("4x");
        }
        SimCommand sim = new SimCommand();
        new CommandLine(sim).parseArgs("--capacity", "8x");
        assertThat(sim.fleet.engineConfig(w).capacityBlocks()).isEqualTo(8 * median);
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
