package dev.kvrouter.jobs.config;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;

/**
 * The routing-view job's configuration: immutable, typed, validated once, one record per concern so
 * each function receives only the slice it uses. {@link #from} reports every problem (missing,
 * malformed, out of range, unknown keys, rules relating two options) in one exception. Each option
 * is declared once, with its default, description and rule, in {@link KvRouterJobOptions}. An option
 * that was removed is no problem: it is ignored, with a warning saying what replaced it
 * ({@link #warnings()}; the job logs them when it is wired).
 */
public record KvRouterJobConfig(KafkaSettings kafka, ViewSettings view, EngineSettings engines, InputLimits limits, CostSettings cost,
        RatioSettings ratios, ReplicaSettings replicas, RuntimeSettings runtime, SecuritySettings security, List<String> warnings)
        implements Serializable {

    public KvRouterJobConfig {
        warnings = List.copyOf(warnings);
    }

    public static KvRouterJobConfig from(Map<String, String> settings) {
        return from(Configuration.fromMap(settings), settings.keySet());
    }

    static KvRouterJobConfig from(Configuration c, Set<String> givenKeys) {
        List<String> problems = new ArrayList<>();
        Set<String> known = KvRouterJobOptions.all().stream().map(ConfigOption::key).collect(Collectors.toSet());
        List<String> warnings = new ArrayList<>();
        givenKeys.stream().filter(k -> !known.contains(k)).sorted().forEach(k -> {
            String replacedBy = KvRouterJobOptions.REMOVED.get(k);
            if (replacedBy != null) {
                warnings.add("option '" + k + "' was removed and is ignored: " + replacedBy);
            } else {
                problems.add("unknown option '" + k + "' (see --help for the options)");
            }
        });
        OptionReader r = new OptionReader(c, problems);
        KvRouterJobConfig config = new KvRouterJobConfig(KafkaSettings.read(r), ViewSettings.read(r), EngineSettings.read(r),
                InputLimits.read(r), CostSettings.read(r), RatioSettings.read(r), ReplicaSettings.read(r), RuntimeSettings.read(r),
                SecuritySettings.read(r), warnings);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("the kv-router job's configuration has " + problems.size()
                    + " problem(s):\n  - " + String.join("\n  - ", problems));
        }
        return config;
    }
}
