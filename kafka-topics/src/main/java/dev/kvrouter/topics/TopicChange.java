package dev.kvrouter.topics;

/** One difference between the declared topics and the cluster. */
public sealed interface TopicChange {

    String topic();

    /** A line for the operator. */
    String describe();

    /** Whether {@code apply} can make it go away; drift needs a person. */
    default boolean fixable() {
        return !(this instanceof Drift);
    }

    record Create(TopicSpec spec) implements TopicChange {
        public String topic() {
            return spec.name();
        }

        public String describe() {
            return String.format("create      %s (%d partitions, replication factor %d, %s)", spec.name(), spec.partitions(),
                    spec.replicationFactor(), spec.configs().isEmpty() ? "no configs" : spec.configs());
        }
    }

    record AddPartitions(String topic, int from, int to) implements TopicChange {
        public String describe() {
            return String.format("partitions  %s %d -> %d (keys move to new partitions from now on)", topic, from, to);
        }
    }

    record SetConfig(String topic, String key, String from, String to) implements TopicChange {
        public String describe() {
            return String.format("config      %s %s: %s -> %s", topic, key, from == null ? "(unset)" : from, to);
        }
    }

    record Drift(String topic, String what) implements TopicChange {
        public String describe() {
            return String.format("drift       %s: %s", topic, what);
        }
    }
}
