package dev.kvrouter.jobs.view;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.jobs.config.KvRouterJobOptions;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.flink.configuration.ConfigOption;
import org.junit.jupiter.api.Test;

/** The README promises a {@code flink run} command with every flag: it names each option once, and no other. */
class ReadmeFlinkRunTest {

    @Test
    void theReadmesFlinkRunCommandHasEveryOptionOfTheJob() throws Exception {
        List<String> args = ReadmeFlinkRun.arguments(Map.of());
        assertThat(args.subList(0, 2)).containsExactly("run", "--detached");
        int jar = args.indexOf(args.stream().filter(a -> a.endsWith("-job.jar")).findFirst().orElseThrow());
        Set<String> flags = new TreeSet<>();
        for (int i = jar + 1; i < args.size(); i += 2) { // after flink's own flags: --name value pairs
            assertThat(args.get(i)).startsWith("--");
            flags.add(args.get(i).substring(2));
        }
        Set<String> options = new TreeSet<>();
        KvRouterJobOptions.all().stream().map(ConfigOption::key).forEach(options::add);
        assertThat(flags).containsExactlyElementsOf(options);
    }
}
