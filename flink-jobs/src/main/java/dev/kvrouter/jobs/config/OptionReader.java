package dev.kvrouter.jobs.config;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.configuration.Configuration;

/**
 * Reads declared options, adding a problem for each value that is malformed or breaks its rule
 * instead of stopping, so one run of the job reports every problem at once.
 */
final class OptionReader {

    private final Configuration settings;
    private final List<String> problems;
    private final Set<String> failed = new HashSet<>();

    OptionReader(Configuration settings, List<String> problems) {
        this.settings = settings;
        this.problems = problems;
    }

    /** The value, or the default after recording what is wrong with it. */
    <T> T get(Declared<T> option) {
        T value;
        try {
            value = settings.get(option.option());
        } catch (IllegalArgumentException e) {
            fail(option, option.key() + ": " + e.getMessage());
            return option.defaultValue();
        }
        String problem = option.problem(value);
        if (problem != null) {
            fail(option, problem);
            return option.defaultValue();
        }
        return value;
    }

    /** Whether every one of these options was read without a problem: a rule relating them means something only then. */
    boolean valid(Declared<?>... options) {
        for (Declared<?> o : options) {
            if (failed.contains(o.key())) {
                return false;
            }
        }
        return true;
    }

    /** A rule relating several options is broken. */
    void problem(String problem) {
        problems.add(problem);
    }

    private void fail(Declared<?> option, String problem) {
        failed.add(option.key());
        problems.add(problem);
    }
}
