package dev.kvrouter.topics;

import java.util.Map;
import java.util.TreeMap;

/** One declared topic: what {@code apply} makes the cluster hold. */
public record TopicSpec(String name, int partitions, short replicationFactor, Map<String, String> configs,
                        String description, String key, String valueSchema) {

    public TopicSpec {
        configs = java.util.Collections.unmodifiableMap(new TreeMap<>(configs));
    }

    public TopicSpec withName(String newName) {
        return new TopicSpec(newName, partitions, replicationFactor, configs, description, key, valueSchema);
    }

    public TopicSpec withReplicationFactor(short rf) {
        return new TopicSpec(name, partitions, rf, configs, description, key, valueSchema);
    }
}
