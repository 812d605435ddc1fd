package dev.kvrouter.topics;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.config.TopicConfig;

/**
 * The declared topics, read from YAML ({@value #BUNDLED} in this jar unless a file is given). The
 * whole file is validated before anything is applied, and every problem is reported at once.
 */
public final class TopicCatalog {

    public static final String BUNDLED = "kvr-topics.yaml";

    private static final Set<String> TOP_LEVEL_KEYS = Set.of("defaults", "topics");
    private static final Set<String> DEFAULT_KEYS = Set.of("replication_factor", "configs");
    private static final Set<String> TOPIC_KEYS = Set.of("name", "description", "key", "value_schema", "writers", "readers",
            "partitions", "replication_factor", "configs");
    private static final Set<String> CLEANUP_POLICIES = Set.of("delete", "compact", "compact,delete", "delete,compact");
    private static final Set<String> KNOWN_CONFIGS = knownTopicConfigs();

    private final List<TopicSpec> topics;
    private final String source;

    private TopicCatalog(List<TopicSpec> topics, String source) {
        this.topics = List.copyOf(topics);
        this.source = source;
    }

    public List<TopicSpec> topics() {
        return topics;
    }

    /** Where the declarations came from, for messages. */
    public String source() {
        return source;
    }

    public Optional<TopicSpec> topic(String name) {
        return topics.stream().filter(t -> t.name().equals(name)).findFirst();
    }

    public static TopicCatalog bundled() {
        try (InputStream in = TopicCatalog.class.getClassLoader().getResourceAsStream(BUNDLED)) {
            if (in == null) {
                throw new IllegalStateException(BUNDLED + " is missing from the kvr-kafka-topics jar");
            }
            return parse(new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8), "classpath:" + BUNDLED);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + BUNDLED + ": " + e.getMessage(), e);
        }
    }

    public static TopicCatalog load(Path file) {
        try {
            return parse(Files.readString(file), file.toString());
        } catch (IOException e) {
            throw new InvalidTopicFileException(file + ": cannot read: " + e.getMessage());
        }
    }

    /** Every topic name prefixed, e.g. for a test's private copy of the pipeline's topics. */
    public TopicCatalog withPrefix(String prefix) {
        return new TopicCatalog(topics.stream().map(t -> t.withName(prefix + t.name())).toList(), source + " (prefix " + prefix + ")");
    }

    public TopicCatalog withReplicationFactor(short rf) {
        return new TopicCatalog(topics.stream().map(t -> t.withReplicationFactor(rf)).toList(), source + " (replication factor " + rf + ")");
    }

    static TopicCatalog parse(String yaml, String source) {
        JsonNode root;
        try {
            root = new ObjectMapper(new YAMLFactory()).readTree(yaml);
        } catch (IOException e) {
            throw new InvalidTopicFileException(source + " is not valid YAML: " + e.getMessage());
        }
        List<String> problems = new ArrayList<>();
        if (root == null || !root.isObject()) {
            throw new InvalidTopicFileException(source + ": expected a mapping with 'defaults' and 'topics'");
        }
        unknownKeys(root, TOP_LEVEL_KEYS, "top level", problems);
        JsonNode defaults = root.path("defaults");
        unknownKeys(defaults, DEFAULT_KEYS, "defaults", problems);
        int defaultRf = defaults.has("replication_factor") ? positiveInt(defaults.get("replication_factor"), "defaults.replication_factor", problems) : 1;
        Map<String, String> defaultConfigs = configs(defaults.path("configs"), "defaults.configs", problems);

        List<TopicSpec> topics = new ArrayList<>();
        JsonNode list = root.path("topics");
        if (!list.isArray() || list.isEmpty()) {
            problems.add("'topics' must be a non-empty list");
        }
        Set<String> seen = new HashSet<>();
        int index = 0;
        for (JsonNode t : list) {
            String where = "topics[" + index++ + "]";
            unknownKeys(t, TOPIC_KEYS, where, problems);
            String name = t.path("name").asText("");
            if (name.isEmpty()) {
                problems.add(where + ": 'name' is missing");
            } else {
                where = "topic " + name;
                if (!name.matches("[a-zA-Z0-9._-]{1,249}")) {
                    problems.add(where + ": a topic name is 1 to 249 of [a-zA-Z0-9._-]");
                }
                if (!seen.add(name)) {
                    problems.add(where + ": declared twice");
                }
            }
            int partitions = t.has("partitions") ? positiveInt(t.get("partitions"), where + ".partitions", problems) : 0;
            if (!t.has("partitions")) {
                problems.add(where + ": 'partitions' is missing");
            }
            int rf = t.has("replication_factor") ? positiveInt(t.get("replication_factor"), where + ".replication_factor", problems) : defaultRf;
            if (rf > Short.MAX_VALUE) {
                problems.add(where + ": replication factor " + rf + " is too large");
            }
            Map<String, String> configs = new LinkedHashMap<>(defaultConfigs);
            configs.putAll(configs(t.path("configs"), where + ".configs", problems));
            String policy = configs.get(TopicConfig.CLEANUP_POLICY_CONFIG);
            if (policy != null && !CLEANUP_POLICIES.contains(policy.replace(" ", ""))) {
                problems.add(where + ": cleanup.policy '" + policy + "' is not delete, compact or compact,delete");
            }
            List<String> writers = roles(t.path("writers"), where + ".writers", problems);
            List<String> readers = roles(t.path("readers"), where + ".readers", problems);
            if (writers.isEmpty()) {
                problems.add(where + ": 'writers' must name the roles that produce to it (" + String.join(", ", TopicAcls.ROLES) + ")");
            }
            topics.add(new TopicSpec(name, partitions, (short) Math.min(rf, Short.MAX_VALUE), configs,
                    t.path("description").asText(""), t.path("key").asText(""), t.path("value_schema").asText(""), writers, readers));
        }
        if (!problems.isEmpty()) {
            throw new InvalidTopicFileException(source + " has " + problems.size() + " problem(s):\n  - "
                    + String.join("\n  - ", problems));
        }
        return new TopicCatalog(topics, source);
    }

    /** A list of roles (TopicAcls.ROLES); empty when the key is absent. */
    private static List<String> roles(JsonNode node, String where, List<String> problems) {
        List<String> roles = new ArrayList<>();
        if (node.isMissingNode() || node.isNull()) {
            return roles;
        }
        if (!node.isArray()) {
            problems.add(where + " must be a list of roles (" + String.join(", ", TopicAcls.ROLES) + ")");
            return roles;
        }
        for (JsonNode role : node) {
            if (!TopicAcls.ROLES.contains(role.asText())) {
                problems.add(where + ": '" + role.asText() + "' is not a role (" + String.join(", ", TopicAcls.ROLES) + ")");
            } else {
                roles.add(role.asText());
            }
        }
        return roles;
    }

    private static Map<String, String> configs(JsonNode node, String where, List<String> problems) {
        Map<String, String> configs = new LinkedHashMap<>();
        if (node.isMissingNode() || node.isNull()) {
            return configs;
        }
        if (!node.isObject()) {
            problems.add(where + " must be a mapping of Kafka topic configs");
            return configs;
        }
        node.fields().forEachRemaining(e -> {
            if (!KNOWN_CONFIGS.contains(e.getKey())) {
                problems.add(where + ": '" + e.getKey() + "' is not a Kafka topic config");
            } else if (!e.getValue().isValueNode()) {
                problems.add(where + "." + e.getKey() + " must be a single value");
            } else {
                configs.put(e.getKey(), e.getValue().asText());
            }
        });
        return configs;
    }

    private static void unknownKeys(JsonNode node, Set<String> allowed, String where, List<String> problems) {
        if (!node.isObject()) {
            return;
        }
        node.fieldNames().forEachRemaining(k -> {
            if (!allowed.contains(k)) {
                problems.add(where + ": unknown key '" + k + "' (allowed: " + String.join(", ", new TreeSet<>(allowed)) + ")");
            }
        });
    }

    private static int positiveInt(JsonNode node, String where, List<String> problems) {
        if (!node.canConvertToInt() || !node.isIntegralNumber() || node.asInt() < 1) {
            problems.add(where + " must be a whole number of at least 1, was '" + node.asText() + "'");
            return 1;
        }
        return node.asInt();
    }

    /** The names Kafka accepts as topic configs, from the client's own constants. */
    private static Set<String> knownTopicConfigs() {
        Set<String> names = new HashSet<>();
        for (Field f : TopicConfig.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class && f.getName().endsWith("_CONFIG")) {
                try {
                    names.add((String) f.get(null));
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return names;
    }

    /** The topic file cannot be used; the message lists every problem. */
    public static final class InvalidTopicFileException extends RuntimeException {
        public InvalidTopicFileException(String message) {
            super(message);
        }
    }
}
