package dev.kvrouter.schemas.serde;

import dev.kvrouter.schemas.registry.RegistrySettings;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The settings of the registry-aware Avro serializer and deserializer, with Confluent's property
 * names. Every problem is reported at once.
 */
public record AvroSerdeConfig(RegistrySettings registry, boolean autoRegister, SubjectNaming subjectNaming,
                              boolean specificReader) {

    /** Register the writer's schema when it is new (default true); else it must be registered already. */
    public static final String AUTO_REGISTER = "auto.register.schemas";
    public static final String KEY_SUBJECT_NAME_STRATEGY = "key.subject.name.strategy";
    public static final String VALUE_SUBJECT_NAME_STRATEGY = "value.subject.name.strategy";
    /** Read into the generated class of the writer's record (default true); false gives GenericRecord. */
    public static final String SPECIFIC_READER = "specific.avro.reader";

    /** For a Kafka serde's configure(): problems become Kafka's ConfigException, the exception clients expect. */
    static AvroSerdeConfig forKafka(Map<String, ?> config, boolean isKey) {
        try {
            return from(config, isKey);
        } catch (IllegalArgumentException e) {
            throw new org.apache.kafka.common.config.ConfigException(e.getMessage());
        }
    }

    static AvroSerdeConfig from(Map<String, ?> config, boolean isKey) {
        List<String> problems = new ArrayList<>();
        RegistrySettings registry = RegistrySettings.parse(config, problems);
        boolean autoRegister = bool(config, AUTO_REGISTER, true, problems);
        boolean specific = bool(config, SPECIFIC_READER, true, problems);
        String strategyKey = isKey ? KEY_SUBJECT_NAME_STRATEGY : VALUE_SUBJECT_NAME_STRATEGY;
        SubjectNaming naming = SubjectNaming.TOPIC_NAME;
        Object rawStrategy = config.get(strategyKey);
        if (rawStrategy != null) {
            Optional<SubjectNaming> parsed = SubjectNaming.parse(rawStrategy.toString());
            if (parsed.isEmpty()) {
                problems.add(strategyKey + " '" + rawStrategy + "' is not one of "
                        + Arrays.stream(SubjectNaming.values()).map(SubjectNaming::confluentName).collect(Collectors.joining(", ")));
            } else {
                naming = parsed.get();
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("invalid Avro serde settings:\n  - " + String.join("\n  - ", problems));
        }
        return new AvroSerdeConfig(registry, autoRegister, naming, specific);
    }

    private static boolean bool(Map<String, ?> config, String key, boolean defaultValue, List<String> problems) {
        Object raw = config.get(key);
        if (raw == null) {
            return defaultValue;
        }
        if (raw instanceof Boolean b) {
            return b;
        }
        String s = raw.toString().trim().toLowerCase();
        if (!s.equals("true") && !s.equals("false")) {
            problems.add(key + " must be true or false, was '" + raw + "'");
            return defaultValue;
        }
        return Boolean.parseBoolean(s);
    }
}
