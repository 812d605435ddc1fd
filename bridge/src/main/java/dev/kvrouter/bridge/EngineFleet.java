package dev.kvrouter.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.kvrouter.events.EngineRole;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The engines file: which engines the bridge follows. YAML (JSON works too):
 * <pre>
 * engines:
 *   - id: vllm-a                           # engine id on Kafka (the job's engine key)
 *     model: meta-llama/Llama-3.1-8B       # served model name
 *     events: tcp://10.0.0.5:5557          # the engine's ZMQ PUB endpoint (rank 0 with data parallelism)
 *     replay: tcp://10.0.0.5:5558          # optional: its ZMQ ROUTER replay endpoint
 *     metrics: http://10.0.0.5:8000/metrics  # optional: Prometheus endpoint for load reports
 *     data-parallel-size: 1                # optional, default 1: ranks publish on port + rank
 *     topic: ""                            # optional ZMQ topic prefix, default "" (all)
 *     kv-blocks-capacity: 0                # optional: KV blocks per rank when the metrics do not say
 *     role: BOTH                           # optional: PREFILL or DECODE under disaggregated serving
 *     max-running: 0                       # optional: the engine's max-num-seqs (its slots); 0 unknown
 * </pre>
 * Parsing reports every problem of the file at once.
 */
public final class EngineFleet {

    private static final Set<String> KEYS = Set.of("id", "model", "events", "replay", "metrics", "data-parallel-size",
            "topic", "kv-blocks-capacity", "role", "max-running");

    private EngineFleet() {}

    /** The engines of a file, by id, in file order. */
    public static Map<String, EngineSpec> load(Path file) {
        String text;
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw new InvalidBridgeConfigException(List.of(file + ": cannot read: " + e.getMessage()));
        }
        return parse(text, file.toString());
    }

    public static Map<String, EngineSpec> parse(String yaml, String source) {
        JsonNode root;
        try {
            root = new ObjectMapper(new YAMLFactory()).readTree(yaml);
        } catch (IOException e) {
            throw new InvalidBridgeConfigException(List.of(source + ": not valid YAML: " + e.getMessage()));
        }
        List<String> problems = new ArrayList<>();
        Map<String, EngineSpec> engines = new LinkedHashMap<>();
        if (root == null || root.isMissingNode() || root.isNull()) {
            throw new InvalidBridgeConfigException(List.of(source + ": empty; expected 'engines:' with a list (it may be empty: engines: [])"));
        }
        JsonNode list = root.get("engines");
        for (Iterator<String> names = root.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!name.equals("engines")) {
                problems.add(source + ": unknown top-level key '" + name + "' (only 'engines')");
            }
        }
        if (list == null || !(list.isArray() || list.isNull())) {
            problems.add(source + ": 'engines' must be a list");
            throw new InvalidBridgeConfigException(problems);
        }
        Set<String> seen = new HashSet<>();
        int index = 0;
        for (JsonNode e : list) {
            String where = source + ": engines[" + index++ + "] ";
            if (!e.isObject()) {
                problems.add(where + "is not a map");
                continue;
            }
            for (Iterator<String> names = e.fieldNames(); names.hasNext(); ) {
                String name = names.next();
                if (!KEYS.contains(name)) {
                    problems.add(where + "unknown key '" + name + "' (known: " + String.join(", ", new java.util.TreeSet<>(KEYS)) + ")");
                }
            }
            EngineSpec spec = new EngineSpec(text(e, "id"), text(e, "model"), text(e, "events"), text(e, "replay"),
                    text(e, "metrics"), e.hasNonNull("topic") ? e.get("topic").asText() : "",
                    integer(e, "data-parallel-size", 1, where, problems), integer(e, "kv-blocks-capacity", 0, where, problems),
                    role(e, where, problems), integer(e, "max-running", 0, where, problems));
            List<String> own = spec.problems(where);
            problems.addAll(own);
            if (spec.id() != null && !seen.add(spec.id())) {
                problems.add(where + "id '" + spec.id() + "' appears twice");
            }
            if (own.isEmpty()) {
                engines.put(spec.id(), spec);
            }
        }
        if (!problems.isEmpty()) {
            throw new InvalidBridgeConfigException(problems);
        }
        return engines;
    }

    private static EngineRole role(JsonNode e, String where, List<String> problems) {
        String role = text(e, "role");
        if (role == null) {
            return EngineRole.BOTH;
        }
        try {
            return EngineRole.valueOf(role.trim().toUpperCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException unknown) {
            problems.add(where + "role '" + role + "' is not one of " + java.util.Arrays.toString(EngineRole.values()));
            return EngineRole.BOTH;
        }
    }

    private static String text(JsonNode e, String key) {
        JsonNode v = e.get(key);
        return v == null || v.isNull() ? null : v.asText();
    }

    private static int integer(JsonNode e, String key, int absent, String where, List<String> problems) {
        JsonNode v = e.get(key);
        if (v == null || v.isNull()) {
            return absent;
        }
        if (!v.canConvertToInt() || !v.isIntegralNumber()) {
            problems.add(where + key + " must be a whole number, was '" + v.asText() + "'");
            return absent;
        }
        return v.asInt();
    }
}
