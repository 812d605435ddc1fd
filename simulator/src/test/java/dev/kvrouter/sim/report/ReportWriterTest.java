package dev.kvrouter.sim.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.sim.SimRunner;
import dev.kvrouter.sim.engine.EngineConfig;
import dev.kvrouter.sim.engine.Failure;
import dev.kvrouter.sim.policy.Policies;
import dev.kvrouter.sim.sink.EventSink;
import dev.kvrouter.sim.workload.SyntheticWorkload;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportWriterTest {

    @Test
    void writesTheMarkdownAndEveryChartHeadless(@TempDir Path dir) throws Exception {
        SimRunner runner = new SimRunner(SimRunner.Settings.defaults(3, EngineConfig.defaults().withCapacity(2_048))
                .withFailures(List.of(Failure.parse("slow:0@10/20x0.5"))).withWindowMs(10_000), null);
        SimRunner.Result result = runner.run(new SyntheticWorkload("mixed", SyntheticWorkload.Settings.defaults(60, 5)), List.of(
                new SimRunner.FleetSpec(Policies.factory("round-robin", Policies.Settings.defaults()), EventSink.DISCARD),
                new SimRunner.FleetSpec(Policies.factory("oracle", Policies.Settings.defaults()), EventSink.DISCARD)));

        Path md = ReportWriter.write(dir, result, new ReportWriter.Bound(0.366, 0.374), "kvr sim --duration 60s");

        String text = Files.readString(md);
        assertThat(text).contains("| round-robin |", "| oracle |", "unbounded-cache bound", "**37.4 %**", "36.6 % in the trace's own 512-token blocks", "engine 0 prefills at 0.50×",
                "| burst | oracle |", "kvr sim --duration 60s");
        for (String png : List.of("ratios", "ttft", "hit-rate", "block-hit-rate", "load-gini", "staleness", "ttft-p50")) {
            Path file = dir.resolve(png + ".png");
            assertThat(file).exists();
            byte[] head = java.util.Arrays.copyOf(Files.readAllBytes(file), 4);
            assertThat(head).containsExactly(0x89, 'P', 'N', 'G');
            assertThat(text).contains("(" + png + ".png)");
        }
    }
}
