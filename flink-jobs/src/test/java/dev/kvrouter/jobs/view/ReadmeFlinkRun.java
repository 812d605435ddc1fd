package dev.kvrouter.jobs.view;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The README's {@code flink run} command, read as the arguments a shell would pass. */
final class ReadmeFlinkRun {

    private static final Pattern QUOTED = Pattern.compile("^(--\\S+) \"(.*)\"$");

    private ReadmeFlinkRun() {}

    /**
     * {@code run --detached --class … --parallelism 4 <jar> --name value …}: one argument per word,
     * a quoted value ({@code "30 s"}) as one argument, with the job options in {@code replaced}
     * given new values (the addresses, say).
     */
    static List<String> arguments(Map<String, String> replaced) throws IOException {
        String readme = Files.readString(Path.of("..", "README.md"));
        int start = readme.indexOf("flink run --detached");
        if (start < 0) {
            throw new IllegalStateException("no 'flink run --detached' command in README.md");
        }
        List<String> args = new ArrayList<>();
        for (String line : readme.substring(start, readme.indexOf("```", start)).split("\n")) {
            String words = line.replaceAll(" \\\\$", "").trim();
            if (words.isEmpty()) {
                continue;
            }
            if (words.startsWith("flink ")) {
                words = words.substring("flink ".length());
            }
            Matcher quoted = QUOTED.matcher(words);
            String[] split = quoted.matches() ? new String[] {quoted.group(1), quoted.group(2)} : words.split(" ");
            if (split.length == 2 && split[0].startsWith("--") && replaced.containsKey(split[0].substring(2))) {
                split[1] = replaced.get(split[0].substring(2));
            }
            args.addAll(List.of(split));
        }
        return args;
    }
}
