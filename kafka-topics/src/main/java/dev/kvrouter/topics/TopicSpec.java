package dev.kvrouter.topics;

import java.util.Map;
import java.util.TreeMap;

/**
 * One declared topic: what {@code apply} makes the cluster hold.
 *
 * @param writers the roles that produce to it ({@link TopicAcls#ROLES})
 * @param readers the roles that consume it
 */
public record TopicSpec(String name, int partitions, short replicationFactor, Map<String, String> configs,
                        String description, String key, String valueSchema, java.util.List<String> writers,
                        java.util.List<String> readers) {

    /** The topic config that says how many replicas must have a write before it is acknowledged (acks=all). */
    public static final String MIN_INSYNC_REPLICAS = "min.insync.replicas";

    /** Unless the file sets it, min.insync.replicas follows the replication factor (see {@link #minInsyncReplicas}). */
    public TopicSpec {
        TreeMap<String, String> all = new TreeMap<>(configs);
        all.putIfAbsent(MIN_INSYNC_REPLICAS, Integer.toString(minInsyncReplicas(replicationFactor)));
        configs = java.util.Collections.unmodifiableMap(all);
        writers = java.util.List.copyOf(writers);
        readers = java.util.List.copyOf(readers);
    }

    /**
     * Replicas a write must reach before the producers' acks=all acknowledge it: with 3 replicas, 2 —
     * a write survives the loss of one broker, and one broker down does not stop writes (Kafka's
     * broker default, 1, acknowledges a write only one broker holds); with fewer, all but one, at least 1.
     */
    static int minInsyncReplicas(short replicationFactor) {
        return Math.max(1, Math.min(2, replicationFactor - 1));
    }

    public TopicSpec withName(String newName) {
        return new TopicSpec(newName, partitions, replicationFactor, configs, description, key, valueSchema, writers, readers);
    }

    public TopicSpec withReplicationFactor(short rf) {
        // (a derived min.insync.replicas is derived again for the new factor; one the file set stays)
        Map<String, String> own = new TreeMap<>(configs);
        if (own.get(MIN_INSYNC_REPLICAS).equals(Integer.toString(minInsyncReplicas(replicationFactor)))) {
            own.remove(MIN_INSYNC_REPLICAS);
        }
        return new TopicSpec(name, partitions, rf, own, description, key, valueSchema, writers, readers);
    }
}
