package dev.kvrouter.schemas.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class AvroSerdeConfigTest {

    @Test
    void defaultsAreConfluents() {
        AvroSerdeConfig c = AvroSerdeConfig.from(Map.of("schema.registry.url", "http://127.0.0.1:8081/"), false);
        assertThat(c.autoRegister()).isTrue();
        assertThat(c.specificReader()).isTrue();
        assertThat(c.subjectNaming()).isEqualTo(SubjectNaming.TOPIC_NAME);
        assertThat(c.registry().urls()).hasSize(1);
        assertThat(c.registry().urls().get(0).toString()).isEqualTo("http://127.0.0.1:8081");
    }

    @Test
    void everyProblemIsReportedAtOnce() {
        assertThatThrownBy(() -> AvroSerdeConfig.from(Map.of(
                "schema.registry.url", "ftp://x, not a url",
                "auto.register.schemas", "yes",
                "value.subject.name.strategy", "Nope",
                "schema.registry.request.timeout.ms", "-5",
                "basic.auth.user.info", "nopassword"), false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'ftp://x' is not an http(s) URL")
                .hasMessageContaining("'not a url'")
                .hasMessageContaining("auto.register.schemas must be true or false")
                .hasMessageContaining("value.subject.name.strategy 'Nope' is not one of TopicNameStrategy")
                .hasMessageContaining("schema.registry.request.timeout.ms must be a positive whole number")
                .hasMessageContaining("basic.auth.user.info must be user:password");
    }

    @Test
    void aMissingUrlSaysWhatToSet() {
        assertThatThrownBy(() -> AvroSerdeConfig.from(Map.of(), true))
                .hasMessageContaining("schema.registry.url is not set");
    }
}
