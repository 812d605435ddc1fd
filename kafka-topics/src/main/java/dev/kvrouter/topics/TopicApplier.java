package dev.kvrouter.topics;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;

/**
 * Compares the declared topics with a cluster ({@link #plan}) and makes the fixable differences go
 * away ({@link #apply}). Planning only reads; applying an empty plan does nothing, so running it
 * twice is safe.
 */
public final class TopicApplier {

    private final Admin admin;
    private final Duration timeout;

    public TopicApplier(Admin admin, Duration timeout) {
        this.admin = admin;
        this.timeout = timeout;
    }

    /** The differences, plus the names of the topics that already match. */
    public record Plan(List<TopicChange> changes, List<String> matching) {
        public List<TopicChange> fixable() {
            return changes.stream().filter(TopicChange::fixable).toList();
        }

        public List<TopicChange> drift() {
            return changes.stream().filter(c -> !c.fixable()).toList();
        }
    }

    public Plan plan(TopicCatalog catalog) {
        Set<String> existing = get(admin.listTopics().names());
        List<TopicSpec> present = catalog.topics().stream().filter(t -> existing.contains(t.name())).toList();
        Map<String, TopicDescription> descriptions = present.isEmpty() ? Map.of()
                : get(admin.describeTopics(names(present)).allTopicNames());
        Map<ConfigResource, Config> configs = present.isEmpty() ? Map.of()
                : get(admin.describeConfigs(present.stream().map(t -> resource(t.name())).toList()).all());

        List<TopicChange> changes = new ArrayList<>();
        List<String> matching = new ArrayList<>();
        for (TopicSpec spec : catalog.topics()) {
            if (!existing.contains(spec.name())) {
                changes.add(new TopicChange.Create(spec));
                continue;
            }
            List<TopicChange> forTopic = new ArrayList<>();
            TopicDescription d = descriptions.get(spec.name());
            int partitions = d.partitions().size();
            if (partitions < spec.partitions()) {
                forTopic.add(new TopicChange.AddPartitions(spec.name(), partitions, spec.partitions()));
            } else if (partitions > spec.partitions()) {
                forTopic.add(new TopicChange.Drift(spec.name(), "has " + partitions + " partitions, " + catalog.source()
                        + " says " + spec.partitions() + ": Kafka cannot remove partitions (declare "
                        + partitions + ", or recreate the topic)"));
            }
            int rf = d.partitions().get(0).replicas().size();
            if (rf != spec.replicationFactor()) {
                forTopic.add(new TopicChange.Drift(spec.name(), "replication factor is " + rf + ", declared "
                        + spec.replicationFactor() + ": change it with a partition reassignment (kafka-reassign-partitions)"));
            }
            Config config = configs.get(resource(spec.name()));
            spec.configs().forEach((key, wanted) -> {
                ConfigEntry entry = config.get(key);
                String actual = entry == null ? null : entry.value();
                if (!sameValue(actual, wanted)) {
                    forTopic.add(new TopicChange.SetConfig(spec.name(), key,
                            entry == null || entry.source() != ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG ? null : actual, wanted));
                }
            });
            for (ConfigEntry entry : config.entries()) {
                if (entry.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG && !spec.configs().containsKey(entry.name())) {
                    forTopic.add(new TopicChange.Drift(spec.name(), entry.name() + "=" + entry.value()
                            + " is set on the topic but not declared: declare it, or delete it with kafka-configs --delete-config"));
                }
            }
            if (forTopic.isEmpty()) {
                matching.add(spec.name());
            }
            changes.addAll(forTopic);
        }
        return new Plan(changes, matching);
    }

    /**
     * Applies the fixable changes: creations, then partition increases, then configs. Every failure is
     * collected, none stops the others.
     *
     * @return one message per change that failed; empty when all went through
     */
    public List<String> apply(Plan plan) {
        List<String> failures = new ArrayList<>();
        List<NewTopic> creations = new ArrayList<>();
        Map<String, NewPartitions> increases = new LinkedHashMap<>();
        Map<ConfigResource, Collection<AlterConfigOp>> alterations = new LinkedHashMap<>();
        for (TopicChange change : plan.fixable()) {
            if (change instanceof TopicChange.Create c) {
                creations.add(new NewTopic(c.spec().name(), c.spec().partitions(), c.spec().replicationFactor())
                        .configs(c.spec().configs()));
            } else if (change instanceof TopicChange.AddPartitions p) {
                increases.put(p.topic(), NewPartitions.increaseTo(p.to()));
            } else if (change instanceof TopicChange.SetConfig s) {
                alterations.computeIfAbsent(resource(s.topic()), r -> new ArrayList<>())
                        .add(new AlterConfigOp(new ConfigEntry(s.key(), s.to()), AlterConfigOp.OpType.SET));
            }
        }
        if (!creations.isEmpty()) {
            admin.createTopics(creations).values().forEach((topic, f) -> await(f, "create " + topic, failures));
        }
        if (!increases.isEmpty()) {
            admin.createPartitions(increases).values().forEach((topic, f) -> await(f, "add partitions to " + topic, failures));
        }
        if (!alterations.isEmpty()) {
            admin.incrementalAlterConfigs(alterations).values()
                    .forEach((r, f) -> await(f, "alter configs of " + r.name(), failures));
        }
        if (failures.isEmpty()) {
            awaitVisible(plan.fixable(), failures);
        }
        return failures;
    }

    /**
     * A finished create, partition increase or config change reaches every broker's metadata a
     * moment later. Wait until it is visible, so whoever comes next (a producer, a second apply)
     * sees the topics as declared.
     */
    private void awaitVisible(List<TopicChange> applied, List<String> failures) {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<TopicChange> pending = new ArrayList<>(applied);
        while (true) {
            try {
                pending.removeIf(this::visible);
            } catch (RuntimeException notYet) {
                // A topic not yet in metadata fails the whole describe; ask again.
            }
            if (pending.isEmpty()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                pending.forEach(c -> failures.add("applied but not visible after " + timeout + ": " + c.describe()));
                return;
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failures.add("interrupted while waiting for the changes to become visible");
                return;
            }
        }
    }

    private boolean visible(TopicChange change) {
        if (change instanceof TopicChange.Create c) {
            if (partitions(c.topic()) < c.spec().partitions()) {
                return false;
            }
            Config config = config(c.topic());
            return c.spec().configs().entrySet().stream().allMatch(e -> valueIs(config, e.getKey(), e.getValue()));
        }
        if (change instanceof TopicChange.AddPartitions p) {
            return partitions(p.topic()) >= p.to();
        }
        if (change instanceof TopicChange.SetConfig s) {
            return valueIs(config(s.topic()), s.key(), s.to());
        }
        return true;
    }

    private int partitions(String topic) {
        return get(admin.describeTopics(List.of(topic)).allTopicNames()).get(topic).partitions().size();
    }

    private Config config(String topic) {
        return get(admin.describeConfigs(List.of(resource(topic))).all()).get(resource(topic));
    }

    private static boolean valueIs(Config config, String key, String wanted) {
        ConfigEntry entry = config.get(key);
        return entry != null && sameValue(entry.value(), wanted);
    }

    /** Kafka lists are order-free ("compact,delete" is "delete,compact"); everything else compares as text. */
    static boolean sameValue(String actual, String wanted) {
        if (actual == null) {
            return false;
        }
        return normalise(actual).equals(normalise(wanted));
    }

    private static String normalise(String value) {
        return Arrays.stream(value.split(",")).map(String::trim).sorted().collect(Collectors.joining(","));
    }

    private static ConfigResource resource(String topic) {
        return new ConfigResource(ConfigResource.Type.TOPIC, topic);
    }

    private static List<String> names(List<TopicSpec> specs) {
        return specs.stream().map(TopicSpec::name).toList();
    }

    private void await(org.apache.kafka.common.KafkaFuture<?> future, String what, List<String> failures) {
        try {
            future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            failures.add("could not " + what + ": " + e.getCause().getMessage());
        } catch (TimeoutException e) {
            failures.add("could not " + what + ": no answer within " + timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failures.add("interrupted while trying to " + what);
        }
    }

    private <T> T get(org.apache.kafka.common.KafkaFuture<T> future) {
        try {
            return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException("Kafka refused: " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("Kafka did not answer within " + timeout + " (is the broker up? A cluster that requires"
                    + " TLS or SASL does not answer a client without them: set security.protocol in the client config,"
                    + " --client-config FILE or $KVR_CLIENT_CONFIG)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
