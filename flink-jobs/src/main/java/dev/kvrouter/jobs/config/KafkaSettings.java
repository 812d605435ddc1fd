package dev.kvrouter.jobs.config;

import static dev.kvrouter.jobs.config.KvRouterJobOptions.*;

import dev.kvrouter.common.TopicNames;
import java.io.Serializable;

/** Where the job reads and writes: the Kafka cluster, the schema registry, the topics' prefix and the sources' group. */
public record KafkaSettings(String bootstrap, String schemaRegistryUrl, String topicPrefix, String groupId, String startingOffsets)
        implements Serializable {

    static KafkaSettings read(OptionReader r) {
        return new KafkaSettings(r.get(KAFKA_BOOTSTRAP), r.get(SCHEMA_REGISTRY_URL), r.get(TOPIC_PREFIX), r.get(GROUP_ID),
                r.get(STARTING_OFFSETS));
    }

    /** A topic of the catalogue ({@link TopicNames}) under this deployment's prefix. */
    public String topic(String name) {
        return topicPrefix + name;
    }
}
