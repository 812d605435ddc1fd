package dev.kvrouter.topics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvrouter.common.TopicNames;
import dev.kvrouter.schemas.KvrSchemas;
import org.apache.avro.Schema;
import org.junit.jupiter.api.Test;

class TopicCatalogTest {

    @Test
    void theBundledFileDeclaresATopicForEveryTopLevelRecord() {
        TopicCatalog catalog = TopicCatalog.bundled();
        assertThat(catalog.topics()).extracting(TopicSpec::valueSchema)
                .containsExactlyInAnyOrderElementsOf(KvrSchemas.TOPIC_VALUES.stream().map(Schema::getFullName).toList());
        assertThat(catalog.topics()).allSatisfy(t -> {
            assertThat(t.description()).isNotBlank();
            assertThat(t.key()).isNotBlank();
            assertThat(t.configs()).containsKey("cleanup.policy");
        });
    }

    @Test
    void theGeneratedTopicNamesAreTheBundledFilesTopicsParsedAsYaml() {
        // TopicNames comes from a line reader at build time (common/src/build); this is the YAML parser's view.
        assertThat(TopicNames.ALL).containsExactlyElementsOf(TopicCatalog.bundled().topics().stream().map(TopicSpec::name).toList());
        assertThat(TopicNames.KV_EVENTS).isEqualTo("kvr.kv-events");
    }

    @Test
    void theViewChangelogIsCompactedAndKvEventsAreKeyedByEngine() {
        TopicCatalog catalog = TopicCatalog.bundled();
        assertThat(catalog.topic("kvr.view-changelog").orElseThrow().configs()).containsEntry("cleanup.policy", "compact");
        assertThat(catalog.topic("kvr.kv-events").orElseThrow().key()).startsWith("engine_id");
        assertThat(catalog.topic("kvr.kv-events").orElseThrow().configs())
                .containsEntry("compression.type", "zstd").containsEntry("retention.ms", "86400000");
    }

    @Test
    void prefixAndReplicationFactorApplyToEveryTopic() {
        TopicCatalog c = TopicCatalog.bundled().withPrefix("it-1.").withReplicationFactor((short) 3);
        assertThat(c.topics()).allSatisfy(t -> {
            assertThat(t.name()).startsWith("it-1.kvr.");
            assertThat(t.replicationFactor()).isEqualTo((short) 3);
            assertThat(t.configs()).as("a write acknowledged survives one broker lost").containsEntry("min.insync.replicas", "2");
        });
        assertThat(TopicCatalog.bundled().topics()).as("the local stack's single broker").allSatisfy(t ->
                assertThat(t.configs()).containsEntry("min.insync.replicas", "1"));
    }

    @Test
    void everyProblemOfAFileIsReportedAtOnce() {
        String yaml = """
                defaults:
                  replication_factor: 0
                  colour: blue
                topics:
                  - name: ok.topic
                    partitions: 3
                    writers: [job]
                    configs:
                      retention.ms: 1000
                      retention.mss: 1000
                  - name: ok.topic
                    partitions: 1
                    writers: [job]
                  - name: "bad name!"
                    partitions: -2
                    writers: [job]
                    configs:
                      cleanup.policy: shred
                  - description: nameless
                    writers: [job]
                """;
        assertThatThrownBy(() -> TopicCatalog.parse(yaml, "test.yaml"))
                .isInstanceOf(TopicCatalog.InvalidTopicFileException.class)
                .hasMessageContaining("test.yaml has 9 problem(s)")
                .hasMessageContaining("defaults: unknown key 'colour'")
                .hasMessageContaining("defaults.replication_factor must be a whole number of at least 1, was '0'")
                .hasMessageContaining("'retention.mss' is not a Kafka topic config")
                .hasMessageContaining("topic ok.topic: declared twice")
                .hasMessageContaining("topic bad name!: a topic name is 1 to 249 of [a-zA-Z0-9._-]")
                .hasMessageContaining("topic bad name!.partitions must be a whole number of at least 1, was '-2'")
                .hasMessageContaining("cleanup.policy 'shred' is not delete, compact or compact,delete")
                .hasMessageContaining("topics[3]: 'name' is missing")
                .hasMessageContaining("topics[3]: 'partitions' is missing");
    }

    @Test
    void listValuedConfigsCompareWithoutOrder() {
        assertThat(TopicApplier.sameValue("delete,compact", "compact, delete")).isTrue();
        assertThat(TopicApplier.sameValue("86400000", "86400000")).isTrue();
        assertThat(TopicApplier.sameValue("86400000", "1000")).isFalse();
        assertThat(TopicApplier.sameValue(null, "1000")).isFalse();
    }
}
