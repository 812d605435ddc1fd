package dev.kvrouter.schemas.serde;

import java.util.Arrays;
import java.util.Optional;
import org.apache.avro.Schema;

/** Confluent's subject name strategies: which registry subject a topic's keys or values are checked under. */
public enum SubjectNaming {
    /** {@code <topic>-key} / {@code <topic>-value}: one record type per topic (the default). */
    TOPIC_NAME("TopicNameStrategy"),
    /** The record's full name: one type shared by many topics. */
    RECORD_NAME("RecordNameStrategy"),
    /** {@code <topic>-<record full name>}: several types in one topic. */
    TOPIC_RECORD_NAME("TopicRecordNameStrategy");

    private final String confluentName;

    SubjectNaming(String confluentName) {
        this.confluentName = confluentName;
    }

    public String subject(String topic, boolean isKey, Schema schema) {
        return switch (this) {
            case TOPIC_NAME -> topic + (isKey ? "-key" : "-value");
            case RECORD_NAME -> schema.getFullName();
            case TOPIC_RECORD_NAME -> topic + "-" + schema.getFullName();
        };
    }

    /** Accepts Confluent's simple or fully qualified class name, e.g. {@code io.confluent...TopicNameStrategy}. */
    public static Optional<SubjectNaming> parse(String value) {
        String simple = value.substring(value.lastIndexOf('.') + 1).trim();
        return Arrays.stream(values()).filter(n -> n.confluentName.equals(simple)).findFirst();
    }

    public String confluentName() {
        return confluentName;
    }
}
