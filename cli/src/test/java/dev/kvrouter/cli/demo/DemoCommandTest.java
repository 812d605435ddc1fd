package dev.kvrouter.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.common.Durations;
import dev.kvrouter.common.TopicNames;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.sim.SimCommand;
import dev.kvrouter.stack.StackAddresses;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class DemoCommandTest {

    private static final StackAddresses STACK = new StackAddresses("127.0.0.1:9092", "http://127.0.0.1:8081/apis/ccompat/v7",
            "redis://127.0.0.1:6380");

    @Test
    void theJobsSettingsAreAValidConfigurationWithShortWindows() {
        KvRouterJobConfig c = KvRouterJobConfig.from(DemoCommand.jobSettings(STACK, "demo-x.", "demo-x:", "demo-x", Path.of("/tmp/d")));
        assertThat(c.kafka().topic(TopicNames.CLASS_RATIOS)).isEqualTo("demo-x.kvr.class-ratios");
        assertThat(c.view().keyPrefix()).isEqualTo("demo-x:");
        assertThat(c.ratios().window()).hasSeconds(10);
        assertThat(c.engines().deadAfter()).hasSeconds(8);
        assertThat(c.runtime().checkpointDir()).isEqualTo("file:///tmp/d/checkpoints");
    }

    @Test
    void theSimulatorTakesTheDemosArgumentsWithFailuresScaledToTheRun() {
        DemoCommand demo = new DemoCommand();
        new CommandLine(demo).parseArgs("--duration", "2m", "--engines", "4", "--workload", "burst", "--seed", "7");
        String[] args = demo.simArgs(STACK, "demo-x.", "demo-x:", Path.of("/tmp/d"), Durations.seconds(demo.duration));
        List<String> list = List.of(args);
        assertThat(list).containsSequence("--duration", "120s").containsSequence("--engines", "4")
                .containsSequence("--workload", "burst").containsSequence("--seed", "7")
                .containsSequence("--rate-scale", "0.500").containsSequence("--publish", "view").containsSequence("--speed", "1")
                .containsSequence("--failures", "kill:2@48,slow:1@72/24x0.25");
        assertThat(list.get(list.indexOf("--policies") + 1).split(",")).startsWith("view").contains("oracle", "sglang");
        // Balancers hold while every engine is full, engines report their slots: the defaults (BENCHMARKS.md, run 16).
        assertThat(list).containsSequence("--view-hold", "30s").contains("--report-slots");
        // The simulator accepts every one of them.
        new CommandLine(new SimCommand()).parseArgs(args);
    }

    @Test
    void theCapacityGoesToTheFleetAndEachDashDToTheJob() {
        DemoCommand demo = new DemoCommand();
        new CommandLine(demo).parseArgs("--capacity", "4x", "-D", "cost.uncached-prefill-weight=2", "-D", "ratios.window=20 s",
                "--engines", "16", "--rate-scale", "0.5");
        String[] args = demo.simArgs(STACK, "demo-x.", "demo-x:", Path.of("/tmp/d"), Durations.seconds(demo.duration));
        assertThat(List.of(args)).containsSequence("--capacity", "4x").containsSequence("--rate-scale", "0.500");
        new CommandLine(new SimCommand()).parseArgs(args);
        KvRouterJobConfig c = KvRouterJobConfig.from(demo.jobSettingsWithOptions(STACK, "demo-x.", "demo-x:", "demo-x", Path.of("/tmp/d")));
        assertThat(c.cost().uncachedPrefillWeight()).isEqualTo(2.0);
        assertThat(c.ratios().window()).as("over the demo's own 10 s").hasSeconds(20);
    }

    @Test
    void holdingAndReportedSlotsCanBeTurnedOff() {
        DemoCommand demo = new DemoCommand();
        new CommandLine(demo).parseArgs("--view-hold", "0ms", "--no-report-slots");
        String[] args = demo.simArgs(STACK, "demo-x.", "demo-x:", Path.of("/tmp/d"), Durations.seconds(demo.duration));
        assertThat(List.of(args)).containsSequence("--view-hold", "0ms").contains("--no-report-slots").doesNotContain("--report-slots");
        new CommandLine(new SimCommand()).parseArgs(args);
    }
}
