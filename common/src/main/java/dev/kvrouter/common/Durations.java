package dev.kvrouter.common;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one grammar for a duration typed by a user, on the command line or in a config file: a whole
 * number and a unit, with or without a space — {@code 500ms}, {@code 90 s}, {@code 10min},
 * {@code 1h}, {@code 2d}. The unit names are Flink's (the job's options are parsed by Flink), so a
 * duration written for one command is read the same by every other; unlike Flink, the unit is
 * required: a bare {@code 90} means seconds to one reader and milliseconds to another.
 */
public final class Durations {

    private static final Pattern DURATION = Pattern.compile("\\s*(\\d+)\\s*([a-z]+)\\s*");

    private static final Map<String, Duration> UNITS = Map.ofEntries(
            Map.entry("ms", Duration.ofMillis(1)), Map.entry("milli", Duration.ofMillis(1)), Map.entry("millis", Duration.ofMillis(1)),
            Map.entry("millisecond", Duration.ofMillis(1)), Map.entry("milliseconds", Duration.ofMillis(1)),
            Map.entry("s", Duration.ofSeconds(1)), Map.entry("sec", Duration.ofSeconds(1)), Map.entry("secs", Duration.ofSeconds(1)),
            Map.entry("second", Duration.ofSeconds(1)), Map.entry("seconds", Duration.ofSeconds(1)),
            Map.entry("m", Duration.ofMinutes(1)), Map.entry("min", Duration.ofMinutes(1)), Map.entry("minute", Duration.ofMinutes(1)),
            Map.entry("minutes", Duration.ofMinutes(1)),
            Map.entry("h", Duration.ofHours(1)), Map.entry("hour", Duration.ofHours(1)), Map.entry("hours", Duration.ofHours(1)),
            Map.entry("d", Duration.ofDays(1)), Map.entry("day", Duration.ofDays(1)), Map.entry("days", Duration.ofDays(1)));

    /** What a user is told on a malformed duration. */
    public static final String FORMAT = "a whole number and a unit, e.g. 500ms, 90s, 10min, 1h (units: ms, s, min, h, d)";

    private Durations() {}

    /** The duration, or an IllegalArgumentException that quotes the text and says the format. */
    public static Duration parse(String text) {
        Matcher m = DURATION.matcher(text == null ? "" : text.toLowerCase(Locale.ROOT));
        Duration unit = m.matches() ? UNITS.get(m.group(2)) : null;
        if (unit == null) {
            throw new IllegalArgumentException("not a duration: '" + text + "': " + FORMAT);
        }
        try {
            return unit.multipliedBy(Long.parseLong(m.group(1)));
        } catch (ArithmeticException | NumberFormatException e) {
            throw new IllegalArgumentException("duration too long: '" + text + "'");
        }
    }

    /** The duration in seconds, fractions kept ({@code 250ms} is 0.25). */
    public static double seconds(String text) {
        return parse(text).toNanos() / 1e9;
    }
}
