package dev.kvrouter.bridge;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A parser of the Prometheus text exposition format (version 0.0.4), enough for an engine's
 * {@code /metrics}: {@code # HELP} / {@code # TYPE} and other comments are skipped, each sample line
 * is {@code name[{label="value",...}] value [timestamp]}, label values may escape {@code \\ \" \n}.
 * A malformed line is reported with its line number, not skipped silently.
 */
public final class PrometheusText {

    /** One sample line. */
    public record Sample(String name, Map<String, String> labels, double value) {
        public String label(String key) {
            return labels.get(key);
        }
    }

    private PrometheusText() {}

    public static List<Sample> parse(String text) {
        List<Sample> samples = new ArrayList<>();
        String[] lines = text.split("\n");
        for (int n = 0; n < lines.length; n++) {
            String line = lines[n].strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            try {
                samples.add(sample(line));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("metrics line " + (n + 1) + ": " + e.getMessage() + ": " + line, e);
            }
        }
        return samples;
    }

    private static Sample sample(String line) {
        int i = 0;
        while (i < line.length() && line.charAt(i) != '{' && !Character.isWhitespace(line.charAt(i))) {
            i++;
        }
        String name = line.substring(0, i);
        if (name.isEmpty()) {
            throw new IllegalArgumentException("no metric name");
        }
        Map<String, String> labels = new LinkedHashMap<>();
        if (i < line.length() && line.charAt(i) == '{') {
            i = labels(line, i + 1, labels);
        }
        String[] rest = line.substring(i).strip().split("\\s+");
        if (rest.length == 0 || rest[0].isEmpty()) {
            throw new IllegalArgumentException("no value");
        }
        return new Sample(name, Map.copyOf(labels), value(rest[0]));
    }

    /** Reads {@code key="value",...}} from {@code i}; returns the index after the closing brace. */
    private static int labels(String line, int i, Map<String, String> labels) {
        while (true) {
            while (i < line.length() && (line.charAt(i) == ',' || line.charAt(i) == ' ')) {
                i++;
            }
            if (i >= line.length()) {
                throw new IllegalArgumentException("unterminated label set");
            }
            if (line.charAt(i) == '}') {
                return i + 1;
            }
            int eq = line.indexOf('=', i);
            if (eq < 0 || eq + 1 >= line.length() || line.charAt(eq + 1) != '"') {
                throw new IllegalArgumentException("a label is not key=\"value\"");
            }
            String key = line.substring(i, eq).strip();
            StringBuilder value = new StringBuilder();
            int j = eq + 2;
            for (; j < line.length() && line.charAt(j) != '"'; j++) {
                char c = line.charAt(j);
                if (c == '\\' && j + 1 < line.length()) {
                    char next = line.charAt(++j);
                    value.append(next == 'n' ? '\n' : next);
                } else {
                    value.append(c);
                }
            }
            if (j >= line.length()) {
                throw new IllegalArgumentException("unterminated label value of '" + key + "'");
            }
            labels.put(key, value.toString());
            i = j + 1;
        }
    }

    private static double value(String s) {
        return switch (s) {
            case "+Inf", "Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> {
                try {
                    yield Double.parseDouble(s);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("value '" + s + "' is not a number");
                }
            }
        };
    }
}
