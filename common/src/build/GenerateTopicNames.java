import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Writes {@code dev.kvrouter.common.TopicNames}, one constant per topic of {@code kvr-topics.yaml}, so the YAML is the
 * only place a topic name is written. Run by the build (common/pom.xml, generate-sources) as a single-file program:
 * {@code java GenerateTopicNames.java <kvr-topics.yaml> <generated sources dir>}.
 *
 * <p>It reads the two lines per topic it needs ({@code - name:} and the {@code description:} under it) rather than
 * the whole YAML, so the build needs no YAML library; kafka-topics' {@code TopicCatalogTest} checks the constants against
 * the file parsed as YAML, and a topic entry this reader does not understand fails the build.
 */
public final class GenerateTopicNames {
    private static final Pattern NAME = Pattern.compile("^  - name: (kvr\\.[a-z][a-z0-9-]*)\\s*$");
    private static final Pattern DESCRIPTION = Pattern.compile("^    description: (.+)$");
    private static final Pattern ANY_NAME = Pattern.compile("^\\s*-?\\s*name:.*$");

    private record Topic(String name, String description) {
        String constant() {
            return name.substring("kvr.".length()).replace('-', '_').toUpperCase(Locale.ROOT);
        }
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            throw new IllegalArgumentException("usage: java GenerateTopicNames.java <kvr-topics.yaml> <generated sources dir>");
        }
        Path yaml = Path.of(args[0]);
        List<String> lines = Files.readAllLines(yaml, StandardCharsets.UTF_8);
        List<Topic> topics = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher name = NAME.matcher(lines.get(i));
            if (name.matches()) {
                Matcher description = i + 1 < lines.size() ? DESCRIPTION.matcher(lines.get(i + 1)) : null;
                if (description == null || !description.matches()) {
                    throw new IllegalStateException(yaml + ":" + (i + 2) + ": topic " + name.group(1)
                            + " needs its 'description:' on the line after its name");
                }
                topics.add(new Topic(name.group(1), description.group(1).trim()));
            } else if (ANY_NAME.matcher(lines.get(i)).matches()) {
                throw new IllegalStateException(yaml + ":" + (i + 1) + ": a topic name is 'kvr.' and lower-case words joined by"
                        + " '-', as '  - name: kvr.kv-events': '" + lines.get(i).trim() + "'");
            }
        }
        if (topics.isEmpty()) {
            throw new IllegalStateException(yaml + " declares no topic");
        }
        StringBuilder java = new StringBuilder();
        java.append("package dev.kvrouter.common;\n\n");
        java.append("/**\n * The topics of kv-router, generated from kvr-topics.yaml (common/src/main/resources), the one place a\n");
        java.append(" * topic name is written: edit the YAML, not this class. Each is the name under an empty prefix; a\n");
        java.append(" * deployment's or a test's topics prefix goes in front.\n */\n");
        java.append("public final class TopicNames {\n");
        for (Topic t : topics) {
            java.append("    /** ").append(t.description().replace("*/", "*&#47;")).append(" */\n");
            java.append("    public static final String ").append(t.constant()).append(" = \"").append(t.name()).append("\";\n\n");
        }
        java.append("    /** Every topic, in the order the YAML declares them. */\n");
        java.append("    public static final java.util.List<String> ALL = java.util.List.of(");
        for (int i = 0; i < topics.size(); i++) {
            java.append(i == 0 ? "" : ", ").append(topics.get(i).constant());
        }
        java.append(");\n\n    private TopicNames() {\n    }\n}\n");
        Path out = Path.of(args[1], "dev", "kvrouter", "common", "TopicNames.java");
        Files.createDirectories(out.getParent());
        // Unchanged content is not rewritten, so an incremental build does not recompile what depends on it.
        if (!Files.exists(out) || !Files.readString(out, StandardCharsets.UTF_8).contentEquals(java)) {
            Files.writeString(out, java, StandardCharsets.UTF_8);
        }
    }
}
