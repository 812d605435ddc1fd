package dev.kvrouter.schemas.serde;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.events.EngineLoad;
import org.junit.jupiter.api.Test;

class SubjectNamingTest {

    @Test
    void subjectsFollowConfluentStrategies() {
        var schema = EngineLoad.getClassSchema();
        assertThat(SubjectNaming.TOPIC_NAME.subject("kvr.engine-load", false, schema)).isEqualTo("kvr.engine-load-value");
        assertThat(SubjectNaming.TOPIC_NAME.subject("kvr.engine-load", true, schema)).isEqualTo("kvr.engine-load-key");
        assertThat(SubjectNaming.RECORD_NAME.subject("t", false, schema)).isEqualTo("dev.kvrouter.events.EngineLoad");
        assertThat(SubjectNaming.TOPIC_RECORD_NAME.subject("t", false, schema)).isEqualTo("t-dev.kvrouter.events.EngineLoad");
    }

    @Test
    void confluentClassNamesAreAccepted() {
        assertThat(SubjectNaming.parse("io.confluent.kafka.serializers.subject.RecordNameStrategy"))
                .contains(SubjectNaming.RECORD_NAME);
        assertThat(SubjectNaming.parse("NoSuchStrategy")).isEmpty();
    }
}
