package dev.kvrouter.topics;

import picocli.CommandLine.Mixin;
import dev.kvrouter.common.cli.ClientConfigOption;
import dev.kvrouter.common.cli.KafkaOption;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code kvr topics apply|list}: the topics as code. */
@Command(name = "topics", mixinStandardHelpOptions = true,
        description = "Kafka topics as code: every topic of the pipeline declared in one YAML file.",
        subcommands = {TopicsCommand.Apply.class, TopicsCommand.ListTopics.class})
public final class TopicsCommand {

    /** Exit code when the cluster differs from the file in a way apply cannot fix. */
    public static final int EXIT_DRIFT = 2;

    public static void main(String[] args) {
        System.exit(new CommandLine(new TopicsCommand()).execute(args));
    }

    static class FileOptions {
        @Option(names = "--file", paramLabel = "YAML",
                description = "Topic declarations (default: the kvr-topics.yaml bundled with kv-router, common/src/main/resources).")
        Path file;

        @Option(names = "--prefix", paramLabel = "PREFIX", defaultValue = "",
                description = "Prefix every topic name, e.g. 'staging.' or a test's private prefix.")
        String prefix;

        @Option(names = "--replication-factor", paramLabel = "N",
                description = "Replication factor for every topic, overriding the file (production: 3).")
        Short replicationFactor;

        TopicCatalog catalog() {
            TopicCatalog catalog = file == null ? TopicCatalog.bundled() : TopicCatalog.load(file);
            if (!prefix.isEmpty()) {
                catalog = catalog.withPrefix(prefix);
            }
            if (replicationFactor != null) {
                catalog = catalog.withReplicationFactor(replicationFactor);
            }
            return catalog;
        }
    }

    @Command(name = "apply", mixinStandardHelpOptions = true,
            description = "Create missing topics, raise partition counts and set configs so the cluster matches the file; "
                    + "report drift it cannot fix. Safe to run again: a second run changes nothing and says so. "
                    + "Exit codes: 0 the cluster matches, 2 drift remains, 1 an error.")
    static final class Apply implements Callable<Integer> {
        @CommandLine.Mixin
        FileOptions files = new FileOptions();

        @Mixin
        KafkaOption kafka;

        @Mixin
        ClientConfigOption clientConfig;

        @Option(names = "--dry-run", description = "Only print what would change.")
        boolean dryRun;

        @Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "30",
                description = "How long to wait for each Kafka request (default: ${DEFAULT-VALUE}).")
        int timeoutSeconds;

        @Option(names = "--acl", paramLabel = "ROLE=PRINCIPAL",
                description = "Also grant each role (bridge, balancer, job) exactly what the file's writers and readers say, e.g. "
                        + "--acl job=User:kvr-job (repeat for each; all three once any is given). Needs an authorizer on the cluster.")
        Map<String, String> acls = new java.util.LinkedHashMap<>();

        @Option(names = "--job-group", paramLabel = "PREFIX", defaultValue = "kvr-routing-view",
                description = "With --acl: the job's consumer group ids start with this (its kafka.group-id; default: ${DEFAULT-VALUE}).")
        String jobGroup;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            TopicCatalog catalog = files.catalog();
            try (Admin admin = Admin.create(KafkaClients.config(clientConfig.load(), adminConfig(kafka.value(), timeoutSeconds)))) {
                List<org.apache.kafka.common.acl.AclBinding> bindings = acls.isEmpty() ? List.of()
                        : TopicAcls.bindings(catalog, acls, jobGroup);
                TopicApplier applier = new TopicApplier(admin, Duration.ofSeconds(timeoutSeconds));
                TopicApplier.Plan plan = applier.plan(catalog);
                if (!bindings.isEmpty()) {
                    if (dryRun) {
                        out.printf("dry run: %d ACL binding(s) to grant to %s%n", bindings.size(), acls);
                    } else {
                        // Granting what is granted already changes nothing: safe to run again.
                        admin.createAcls(bindings).all().get(timeoutSeconds, java.util.concurrent.TimeUnit.SECONDS);
                        out.printf("granted %d ACL binding(s) to %s%n", bindings.size(), acls);
                    }
                }
                if (plan.changes().isEmpty()) {
                    out.printf("no change: all %d topics match %s%n", plan.matching().size(), catalog.source());
                    return 0;
                }
                plan.changes().forEach(c -> out.println(c.describe()));
                List<TopicChange> fixable = plan.fixable();
                if (dryRun) {
                    out.printf("dry run: %d change(s) to apply, %d drift(s) to fix by hand, %d topic(s) match%n",
                            fixable.size(), plan.drift().size(), plan.matching().size());
                    return plan.drift().isEmpty() ? 0 : EXIT_DRIFT;
                }
                List<String> failures = applier.apply(plan);
                failures.forEach(f -> spec.commandLine().getErr().println("error       " + f));
                out.printf("applied %d change(s), %d failed; %d drift(s) to fix by hand; %d topic(s) already matched%n",
                        fixable.size() - failures.size(), failures.size(), plan.drift().size(), plan.matching().size());
                if (!failures.isEmpty()) {
                    return 1;
                }
                return plan.drift().isEmpty() ? 0 : EXIT_DRIFT;
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                throw new IllegalStateException("granting the ACLs failed (is an authorizer on, and may this principal alter ACLs?): "
                        + e.getMessage(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            } catch (IllegalStateException e) {
                if (e.getCause() != null && KafkaClients.isRefusal(e.getCause())) {
                    throw new IllegalStateException(KafkaClients.explain(kafka.value(), e.getCause()), e.getCause());
                }
                throw e;
            }
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "Print the declared topics: name, partitions, key, value schema.")
    static final class ListTopics implements Callable<Integer> {
        @CommandLine.Mixin
        FileOptions files = new FileOptions();

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            for (TopicSpec t : files.catalog().topics()) {
                out.printf("%-28s %3d partitions  rf %d  key: %s%n%28s value: %s — %s%n", t.name(), t.partitions(),
                        t.replicationFactor(), t.key(), "", t.valueSchema(), t.description());
            }
            return 0;
        }
    }

    static Map<String, Object> adminConfig(String bootstrap, int timeoutSeconds) {
        return Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeoutSeconds * 1000,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, Math.min(timeoutSeconds * 1000, 15_000));
    }
}
