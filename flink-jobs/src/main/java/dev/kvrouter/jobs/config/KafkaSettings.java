package dev.kvrouter.jobs.config;

import static dev.kvrouter.jobs.config.KvRouterJobOptions.*;

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
        return topic("kvr.kv-events");
    }

    public String engineLoadTopic() {
        return topic("kvr.engine-load");
    }

    public String deadLetterTopic() {
        return topic("kvr.dead-letter");
    }

    public String viewChangelogTopic() {
        return topic("kvr.view-changelog");
    }

    public String routingDecisionsTopic() {
        return topic("kvr.routing-decisions");
    }

    public String requestOutcomesTopic() {
        return topic("kvr.request-outcomes");
    }

    public String classRatiosTopic() {
        return topic("kvr.class-ratios");
    }

    public String alertsTopic() {
        return topic("kvr.alerts");
    }

    public String replicationRecommendationsTopic() {
        return topic("kvr.replication-recommendations");
    }

    public String engineStateTopic() {
        return topic("kvr.engine-state");
    }
}
