package dev.kvrouter.topics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.LocalStackExtension;
import dev.kvrouter.stack.junit.UniqueNames;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import picocli.CommandLine;

/** {@code topics apply} against the real broker, each test on its own prefixed copy of the topics. */
@ExtendWith(LocalStackExtension.class)
class TopicApplyITCase {

    private Admin admin;
    private String prefix;
    private StackAddresses stack;

    @BeforeEach
    void connect(StackAddresses stack) {
        this.stack = stack;
        this.admin = Admin.create(Map.of("bootstrap.servers", stack.kafkaBootstrap()));
        this.prefix = UniqueNames.topic("it") + ".";
    }

    @AfterEach
    void close() {
        admin.close();
    }

    @Test
    void applyCreatesEveryTopicAsDeclaredAndASecondApplyChangesNothing() throws Exception {
        Run first = apply();
        assertThat(first.exit).as(first.out + first.err).isZero();
        TopicCatalog catalog = TopicCatalog.bundled().withPrefix(prefix);
        assertThat(first.out).contains("applied " + catalog.topics().size() + " change(s), 0 failed");

        List<String> names = catalog.topics().stream().map(TopicSpec::name).toList();
        Map<String, TopicDescription> described = admin.describeTopics(names).allTopicNames().get();
        for (TopicSpec spec : catalog.topics()) {
            assertThat(described.get(spec.name()).partitions()).hasSize(spec.partitions());
            Config config = config(spec.name());
            spec.configs().forEach((k, v) -> assertThat(config.get(k).value()).as(spec.name() + " " + k).isEqualTo(v));
        }

        Run second = apply();
        assertThat(second.exit).isZero();
        assertThat(second.out.strip()).isEqualTo("no change: all " + names.size() + " topics match " + catalog.source());
    }

    @Test
    void applyRaisesPartitionsAndSetsConfigsButReportsWhatItCannotFix() throws Exception {
        String engineLoad = prefix + "kvr.engine-load";    // declared: 6 partitions, retention 6 h
        String ratios = prefix + "kvr.class-ratios";       // declared: 3 partitions
        admin.createTopics(List.of(
                new NewTopic(engineLoad, 2, (short) 1).configs(Map.of("retention.ms", "1000", "segment.bytes", "1048576")),
                new NewTopic(ratios, 5, (short) 1))).all().get();

        TopicApplier applier = new TopicApplier(admin, Duration.ofSeconds(30));
        TopicApplier.Plan plan = applier.plan(TopicCatalog.bundled().withPrefix(prefix));
        assertThat(plan.changes()).contains(
                new TopicChange.AddPartitions(engineLoad, 2, 6),
                new TopicChange.SetConfig(engineLoad, "retention.ms", "1000", "21600000"));
        assertThat(plan.drift()).extracting(TopicChange::describe).containsExactlyInAnyOrder(
                "drift       " + engineLoad + ": segment.bytes=1048576 is set on the topic but not declared: "
                        + "declare it, or delete it with kafka-configs --delete-config",
                "drift       " + ratios + ": has 5 partitions, classpath:kvr-topics.yaml (prefix " + prefix
                        + ") says 3: Kafka cannot remove partitions (declare 5, or recreate the topic)");

        Run run = apply();
        assertThat(run.exit).as("drift remains").isEqualTo(TopicsCommand.EXIT_DRIFT);
        assertThat(admin.describeTopics(List.of(engineLoad)).allTopicNames().get().get(engineLoad).partitions()).hasSize(6);
        assertThat(config(engineLoad).get("retention.ms").value()).isEqualTo("21600000");

        // What is left is only what a person must decide.
        TopicApplier.Plan after = applier.plan(TopicCatalog.bundled().withPrefix(prefix));
        assertThat(after.fixable()).isEmpty();
        assertThat(after.drift()).hasSize(2);

        admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, engineLoad),
                List.of(new AlterConfigOp(new ConfigEntry("segment.bytes", ""), AlterConfigOp.OpType.DELETE)))).all().get();
        assertThat(applier.plan(TopicCatalog.bundled().withPrefix(prefix)).drift()).hasSize(1);
    }

    @Test
    void dryRunChangesNothing() throws Exception {
        Run dry = apply("--dry-run");
        assertThat(dry.exit).isZero();
        assertThat(dry.out).contains("dry run: " + TopicCatalog.bundled().topics().size() + " change(s) to apply");
        assertThat(admin.listTopics().names().get()).noneMatch(n -> n.startsWith(prefix));
    }

    private Config config(String topic) throws Exception {
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        return admin.describeConfigs(List.of(r)).all().get().get(r);
    }

    private record Run(int exit, String out, String err) {}

    private Run apply(String... extra) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new TopicsCommand());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        List<String> args = new java.util.ArrayList<>(List.of("apply", "--bootstrap", stack.kafkaBootstrap(), "--prefix", prefix));
        args.addAll(List.of(extra));
        int exit = cli.execute(args.toArray(String[]::new));
        return new Run(exit, out.toString(), err.toString());
    }
}
