package dev.kvrouter.jobs.view;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvrouter.common.TopicNames;
import dev.kvrouter.jobs.config.Declared;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.jobs.config.KvRouterJobOptions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class KvRouterJobConfigTest {

    @Test
    void defaultsNeedOnlyTheThreeAddresses() {
        KvRouterJobConfig c = TestConfigs.with();
        assertThat(c.view().chunkTokens()).isEqualTo(16);
        assertThat(c.kafka().topic(TopicNames.KV_EVENTS)).isEqualTo("kvr.kv-events");
        assertThat(c.view().ttl()).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.view().lifetimesToFloor()).isCloseTo(Math.log(20), org.assertj.core.data.Offset.offset(1e-12));
        assertThat(TestConfigs.with("topics.prefix", "t.").kafka().topic(TopicNames.DEAD_LETTER)).isEqualTo("t.kvr.dead-letter");
    }

    @Test
    void everyProblemIsReportedAtOnce() {
        assertThatThrownBy(() -> KvRouterJobConfig.from(Map.of(
                "redis.url", "redis://127.0.0.1:1",
                "view.chunk-tokens", "0",
                "view.busy-factor", "0.5",
                "engine.suspect-after", "banana",
                "kafka.starting-offsets", "middle",
                "view.chunk-token", "16")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("has 7 problem(s)")
                .hasMessageContaining("unknown option 'view.chunk-token'")
                .hasMessageContaining("kafka.bootstrap is required: Kafka bootstrap servers, host:port[,host:port]. Required.")
                .hasMessageContaining("schema-registry.url is required")
                .hasMessageContaining("view.chunk-tokens must be at least 1, was 0")
                .hasMessageContaining("view.busy-factor must be a finite number above 1.0, was 0.5")
                .hasMessageContaining("engine.suspect-after:")
                .hasMessageContaining("kafka.starting-offsets must be one of latest, earliest, was 'middle'");
    }

    @Test
    void theRemovedClassSwitchOptionsAreIgnoredWithAWarningSayingWhatReplacedThem() {
        KvRouterJobConfig c = TestConfigs.with("ratios.affinity-off-below", "0.05", "ratios.affinity-on-above", "0.15");
        assertThat(c.warnings()).hasSize(2).allSatisfy(w -> assertThat(w)
                .contains("was removed and is ignored", "kvr_pick prices every request", "cost.uncached-prefill-weight", "AFFINITY_NOT_PAYING"));
        assertThat(c.warnings().get(0)).startsWith("option 'ratios.affinity-off-below'");
        assertThat(TestConfigs.with().warnings()).isEmpty();
        // A removed option is not a problem; a misspelt one still is, and so is a bad value beside it.
        assertThatThrownBy(() -> TestConfigs.with("ratios.affinity-off-below", "0.05", "ratios.affinity-of-below", "0.05",
                "ratios.affinity-min-requests", "0"))
                .hasMessageContaining("has 2 problem(s)")
                .hasMessageContaining("unknown option 'ratios.affinity-of-below'")
                .hasMessageContaining("ratios.affinity-min-requests must be at least 1");
    }

    @Test
    void aNumberOptionTakesNoInfinity() {
        assertThatThrownBy(() -> TestConfigs.with("cost.prefill-tokens-per-s", "Infinity", "view.busy-factor", "Infinity",
                "ratios.usd-per-million-input", "Infinity"))
                .hasMessageContaining("cost.prefill-tokens-per-s must be a finite number above 0.0, was Infinity")
                .hasMessageContaining("view.busy-factor must be a finite number above 1.0, was Infinity")
                .hasMessageContaining("ratios.usd-per-million-input must be a finite number at least 0.0, was Infinity");
    }

    @Test
    void relationsBetweenOptionsAreChecked() {
        assertThatThrownBy(() -> TestConfigs.with("engine.suspect-after", "20 s", "engine.dead-after", "10 s"))
                .hasMessageContaining("engine.dead-after (PT10S) must be longer than engine.suspect-after (PT20S)");
        assertThatThrownBy(() -> TestConfigs.with("view.ttl", "1 s", "view.flush-interval", "500 ms"))
                .hasMessageContaining("view.ttl (PT1S) must be at least 3 times view.flush-interval (PT0.5S)");
        assertThatThrownBy(() -> TestConfigs.with("job.state-changelog", "true"))
                .hasMessageContaining("job.state-changelog needs job.checkpoint-dir: the state changelog is written beside the checkpoints");
    }

    @Test
    void theStateChangelogGoesBesideTheCheckpoints() {
        KvRouterJobConfig config = TestConfigs.with("job.state-changelog", "true", "job.checkpoint-dir", "file:///var/kvr/checkpoints/");
        var flink = KvRouterJob.environment(config, null).getConfiguration();
        assertThat(flink.get(org.apache.flink.configuration.StateChangelogOptions.ENABLE_STATE_CHANGE_LOG)).isTrue();
        assertThat(flink.get(KvRouterJob.CHANGELOG_BASE_PATH)).isEqualTo("file:///var/kvr/checkpoints/changelog");
        var off = KvRouterJob.environment(TestConfigs.with("job.checkpoint-dir", "file:///var/kvr/checkpoints"), null).getConfiguration();
        assertThat(off.get(org.apache.flink.configuration.StateChangelogOptions.ENABLE_STATE_CHANGE_LOG)).isFalse();
    }

    @Test
    void helpListsEveryOptionWithItsDefault() {
        String help = KvRouterJob.help();
        for (var o : KvRouterJobOptions.all()) {
            assertThat(help).contains("--" + o.key());
        }
        assertThat(help).contains("--view.chunk-tokens  (default: 16)");
    }

    @Test
    void everyOptionIsDeclaredOnceUnderItsOwnKeyWithADescription() {
        List<String> keys = KvRouterJobOptions.all().stream().map(o -> o.key()).toList();
        assertThat(keys).as("option keys").doesNotHaveDuplicates().hasSizeGreaterThan(40);
        for (var o : KvRouterJobOptions.all()) {
            assertThat(o.description().toString()).as(o.key()).isNotBlank();
        }
    }

    @Test
    void everyDefaultMeetsTheRuleDeclaredBesideIt() throws IllegalAccessException {
        int checked = 0;
        for (java.lang.reflect.Field f : KvRouterJobOptions.class.getFields()) {
            if (f.getType() == Declared.class) {
                Declared<?> option = (Declared<?>) f.get(null);
                if (option.defaultValue() != null) {
                    assertThat(problem(option)).as(option.key()).isNull();
                    checked++;
                }
            }
        }
        assertThat(checked).isGreaterThan(40);
    }

    @SuppressWarnings("unchecked")
    private static <T> String problem(Declared<T> option) {
        return option.problem(option.defaultValue());
    }

    @Test
    void aRuleRelatingTwoOptionsIsCheckedOnlyWhenBothAreValid() {
        // The dead-after rule would compare against a suspect-after that is not there: only the malformed value is reported.
        assertThatThrownBy(() -> TestConfigs.with("engine.suspect-after", "soon", "engine.dead-after", "1 s"))
                .hasMessageContaining("has 1 problem(s)")
                .hasMessageContaining("engine.suspect-after:");
        // Each slice carries only its own options.
        KvRouterJobConfig c = TestConfigs.with("replicas.min", "3", "replicas.max", "5", "engine.queue-cap", "9");
        assertThat(c.replicas().min()).isEqualTo(3);
        assertThat(c.replicas().max()).isEqualTo(5);
        assertThat(c.engines().queueCap()).isEqualTo(9);
    }

    @Test
    void argumentsTakeBothForms() {
        assertThat(KvRouterJob.parseArgs(new String[] {"--a", "1", "--b=2"})).containsEntry("a", "1").containsEntry("b", "2");
        assertThatThrownBy(() -> KvRouterJob.parseArgs(new String[] {"--a"})).hasMessageContaining("has no value");
    }
}
