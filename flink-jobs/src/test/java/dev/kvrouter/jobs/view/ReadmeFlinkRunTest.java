package dev.kvrouter.jobs.view;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.configuration.ConfigOption;
import org.junit.jupiter.api.Test;

/** The README promises a {@code flink run} command with every flag: it names each option once, and no other. */
class ReadmeFlinkRunTest {

    @Test
    void theReadmesFlinkRunCommandHasEveryOptionOfTheJob() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        int start = readme.indexOf("flink run --detached");
        assertThat(start).as("a 'flink run --detached' command in README.md").isNotNegative();
        String command = readme.substring(start, readme.indexOf("```", start));
        String jobArguments = command.substring(command.indexOf("-job.jar")); // after flink's own flags
        Set<String> flags = new TreeSet<>();
        Matcher m = Pattern.compile("^\\s*--([a-z][\\w.-]*) ", Pattern.MULTILINE).matcher(jobArguments);
        while (m.find()) {
            flags.add(m.group(1));
        }
        Set<String> options = new TreeSet<>();
        RoutingViewOptions.all().stream().map(ConfigOption::key).forEach(options::add);
        assertThat(flags).containsExactlyElementsOf(options);
    }
}
