package dev.kvrouter.jobs.config;

import java.time.Duration;
import java.util.List;
import org.apache.flink.configuration.ConfigOption;

/**
 * A job option and the rule its value must meet, declared together (Flink's {@link ConfigOption}
 * carries the key, type, default and description; this adds the check, as Debezium's {@code Field}
 * does). Rules that relate two options live in the settings record that holds both.
 */
public record Declared<T>(ConfigOption<T> option, Rule<T> rule) {

    /** What is wrong with a value, as the rest of a sentence that starts with the key; null when it is fine. */
    @FunctionalInterface
    public interface Rule<T> {
        String problem(T value);
    }

    public static <T> Declared<T> declare(ConfigOption<T> option, Rule<T> rule) {
        return new Declared<>(option, rule);
    }

    public String key() {
        return option.key();
    }

    public T defaultValue() {
        return option.defaultValue();
    }

    /** "key: what is wrong" for a value that breaks the rule, else null. */
    public String problem(T value) {
        String p = rule.problem(value);
        if (p == null) {
            return null;
        }
        return key() + " " + p + (p.equals(MISSING) ? ": " + describe(option) : "");
    }

    private static final String MISSING = "is required";

    /** An option's description as plain text. */
    public static String describe(ConfigOption<?> option) {
        return new org.apache.flink.configuration.description.HtmlFormatter().format(option.description())
                .replace("&lt;", "<").replace("&gt;", ">").replace("&#39;", "'").replace("&quot;", "\"").replace("&amp;", "&");
    }

    public static <T> Rule<T> any() {
        return v -> null;
    }

    /** Set and not blank; the problem quotes the option's description, which says what it is for. */
    public static Rule<String> required() {
        return v -> v == null || v.isBlank() ? MISSING : null;
    }

    public static Rule<String> oneOf(String... allowed) {
        List<String> values = List.of(allowed);
        return v -> values.contains(v) ? null : "must be one of " + String.join(", ", allowed) + ", was '" + v + "'";
    }

    public static Rule<Integer> atLeast(int min) {
        return v -> v != null && v >= min ? null : "must be at least " + min + ", was " + v;
    }

    /** At least min, and finite: a price or a rate of Infinity would make every figure it enters NaN or infinite. */
    public static Rule<Double> atLeast(double min) {
        return v -> v != null && v >= min && Double.isFinite(v) ? null : "must be a finite number at least " + min + ", was " + v;
    }

    public static Rule<Duration> atLeast(Duration min) {
        return v -> v != null && v.compareTo(min) >= 0 ? null : "must be at least " + min + ", was " + v;
    }

    /** Above min, and finite (see atLeast). */
    public static Rule<Double> above(double min) {
        return v -> v != null && v > min && Double.isFinite(v) ? null : "must be a finite number above " + min + ", was " + v;
    }

    /** In (0, 1]. */
    public static Rule<Double> fraction() {
        return v -> v != null && v > 0 && v <= 1 ? null : "must be above 0 and at most 1, was " + v;
    }

    /** Strictly between the two bounds. */
    public static Rule<Double> between(double low, double high) {
        return v -> v != null && v > low && v < high ? null : "must be between " + low + " and " + high + ", was " + v;
    }
}
