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

    public String topic(String name) {
        return topicPrefix + name;
    }

    public String kvEventsTopic() {
        return topic(TopicNames.KV_EVENTS);
    }

    public String engineLoadTopic() {
        return topic(TopicNames.ENGINE_LOAD);
    }

    public String deadLetterTopic() {
        return topic(TopicNames.DEAD_LETTER);
    }

    public String viewChangelogTopic() {
        return topic(TopicNames.VIEW_CHANGELOG);
    }

    public String routingDecisionsTopic() {
        return topic(TopicNames.ROUTING_DECISIONS);
    }

    public String requestOutcomesTopic() {
        return topic(TopicNames.REQUEST_OUTCOMES);
    }

    public String classRatiosTopic() {
        return topic(TopicNames.CLASS_RATIOS);
    }

    public String alertsTopic() {
        return topic(TopicNames.ALERTS);
    }

    public String replicationRecommendationsTopic() {
        return topic(TopicNames.REPLICATION_RECOMMENDATIONS);
    }

    public String engineStateTopic() {
        return topic(TopicNames.ENGINE_STATE);
    }
}
