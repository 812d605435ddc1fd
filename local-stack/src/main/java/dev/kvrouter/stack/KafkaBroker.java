package dev.kvrouter.stack;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.common.Uuid;

/** A single-node KRaft Kafka broker (combined broker and controller) in its own JVM. */
final class KafkaBroker {

    private static final String CLASSPATH_RESOURCE = "kvr-kafka-broker.classpath";

    private KafkaBroker() {}

    /** Formats a fresh log dir and starts the broker; returns the broker process. */
    static Process start(Path stateDir, int brokerPort, int controllerPort, String marker) {
        return start(stateDir, brokerPort, controllerPort, marker, true, null, null);
    }

    /**
     * A second plaintext listener, {@code LINK}, on {@code listenPort}, advertised at {@code advertisedPort}:
     * a client bootstrapped there is told to keep using {@code advertisedPort}, so a relay on it (a
     * {@link TcpProxy} to {@code listenPort}) carries all of that client's traffic and can cut it, while
     * clients of the main listener go on.
     */
    record Link(int listenPort, int advertisedPort) {}

    /**
     * Starts the broker, on a fresh log dir or ({@code fresh} false) on the one a killed broker left.
     * With {@code security}, its client listener is SASL_SSL (SCRAM-SHA-512, the users created when
     * the log dir is formatted), and the broker talks to itself the same way.
     */
    static Process start(Path stateDir, int brokerPort, int controllerPort, String marker, boolean fresh, StackSecurity security, Link link) {
        Path dataDir = stateDir.resolve("kafka-data");
        Path config = stateDir.resolve("kafka-server.properties");
        Path log4j = stateDir.resolve("kafka-log4j2.properties");
        Path logs = stateDir.resolve("logs");
        if (fresh) {
            Directories.deleteRecursively(dataDir);
        }
        String properties = serverProperties(dataDir, brokerPort, controllerPort, security, link);
        if (security != null) {
            StackSecurity.writeOwnerOnly(config, properties); // it holds the broker's own passwords
        } else {
            write(config, properties);
        }
        write(log4j, LOG4J2);

        String classpath = brokerClasspath();
        List<String> jvm = new ArrayList<>(List.of(LocalStack.javaExecutable(), "-cp", classpath,
                "-Xms128m", "-Xmx768m", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
                "-Djava.awt.headless=true", "-Dlog4j2.configurationFile=" + log4j,
                "-Dkafka.logs.dir=" + logs, marker));

        if (fresh) {
            List<String> format = new ArrayList<>(jvm);
            format.addAll(List.of("kafka.tools.StorageTool", "format", "-t", Uuid.randomUuid().toString(),
                    "-c", config.toString(), "--ignore-formatted"));
            if (security != null) {
                // SCRAM users as salted passwords: the passwords themselves are on no command line.
                format.addAll(List.of("--add-scram", security.scramCredential(StackSecurity.BROKER_USER, "broker-password"),
                        "--add-scram", security.scramCredential(StackSecurity.CLIENT_USER, "kafka-password")));
                for (String role : StackSecurity.ROLES) {
                    format.addAll(List.of("--add-scram", security.scramCredential(StackSecurity.roleUser(role), StackSecurity.roleSecret(role))));
                }
            }
            Path formatLog = logs.resolve("kafka-format.log");
            int exit = Processes.runToCompletion(format, stateDir, formatLog, Duration.ofSeconds(60));
            if (exit != 0) {
                throw new IllegalStateException("formatting the Kafka log dir failed (exit " + exit + "):\n"
                        + Processes.tail(formatLog, 20));
            }
        }

        List<String> server = new ArrayList<>(jvm);
        server.addAll(List.of("kafka.Kafka", config.toString()));
        return Processes.startDetached(server, stateDir, logs.resolve("kafka.log"));
    }

    /** True when the broker answers a metadata request. */
    static boolean answers(String bootstrap) {
        return answers(bootstrap, Map.of());
    }

    /** True when the broker answers a metadata request of a client with these (security) settings. */
    static boolean answers(String bootstrap, Map<String, Object> client) {
        Map<String, Object> config = new java.util.HashMap<>(client);
        config.putAll(Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 2000,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 3000,
                AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 200));
        try (Admin admin = Admin.create(config)) {
            return !admin.describeCluster(new DescribeClusterOptions().timeoutMs(3000))
                    .nodes().get(4, TimeUnit.SECONDS).isEmpty();
        } catch (Exception e) {
            return false;
        }
    }

    static String brokerClasspath() {
        try (InputStream in = KafkaBroker.class.getResourceAsStream(CLASSPATH_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(CLASSPATH_RESOURCE + " is missing from the kvr-local-stack jar: "
                        + "build it with Maven (mvn -pl local-stack package)");
            }
            String cp = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
            for (String entry : cp.split(java.io.File.pathSeparator)) {
                if (!Files.exists(Path.of(entry))) {
                    throw new IllegalStateException("the Kafka broker jar " + entry
                            + " is gone from the local Maven repository: rebuild with 'mvn -pl local-stack package'");
                }
            }
            return cp;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String serverProperties(Path dataDir, int brokerPort, int controllerPort, StackSecurity security, Link link) {
        Properties p = new Properties();
        p.setProperty("process.roles", "broker,controller");
        p.setProperty("node.id", "1");
        p.setProperty("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
        p.setProperty("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort);
        p.setProperty("controller.listener.names", "CONTROLLER");
        p.setProperty("inter.broker.listener.name", "PLAINTEXT");
        p.setProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        p.setProperty("log.dirs", dataDir.toString());
        p.setProperty("num.partitions", "1");
        // Topics are code (kafka-topics): nothing appears by accident.
        p.setProperty("auto.create.topics.enable", "false");
        p.setProperty("offsets.topic.replication.factor", "1");
        p.setProperty("offsets.topic.num.partitions", "4");
        p.setProperty("transaction.state.log.replication.factor", "1");
        p.setProperty("transaction.state.log.min.isr", "1");
        p.setProperty("transaction.state.log.num.partitions", "4");
        p.setProperty("share.coordinator.state.topic.replication.factor", "1");
        p.setProperty("share.coordinator.state.topic.min.isr", "1");
        p.setProperty("group.initial.rebalance.delay.ms", "0");
        p.setProperty("log.segment.bytes", Integer.toString(64 * 1024 * 1024));
        if (security != null) {
            // Clients reach the broker on SASL_SSL only; the controller listener stays loopback plaintext
            // (KRaft controllers cannot take SCRAM: its credentials live in the metadata they serve).
            p.setProperty("listeners", "SASL_SSL://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
            p.setProperty("advertised.listeners", "SASL_SSL://127.0.0.1:" + brokerPort);
            p.setProperty("inter.broker.listener.name", "SASL_SSL");
            p.setProperty("listener.security.protocol.map", "SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT");
            p.setProperty("sasl.enabled.mechanisms", "SCRAM-SHA-512");
            // Every client is authorized: the role users get only what `kvr topics apply --acl` grants them.
            // Super users: the broker, the stack's own client (its tools create topics and grant the ACLs), and
            // ANONYMOUS, which is what the loopback plaintext controller listener sees the broker as (KRaft:
            // the broker registers and heartbeats there); clients reach only the SASL_SSL listener.
            p.setProperty("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
            p.setProperty("super.users", "User:" + StackSecurity.BROKER_USER + ";User:" + StackSecurity.CLIENT_USER + ";User:ANONYMOUS");
            p.setProperty("sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-512");
            p.setProperty("listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config",
                    "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + StackSecurity.BROKER_USER
                            + "\" password=\"" + security.secret("broker-password") + "\";");
            p.setProperty("ssl.keystore.type", "PKCS12");
            p.setProperty("ssl.keystore.location", security.serverKeystore().toString());
            p.setProperty("ssl.keystore.password", security.storePassword());
            p.setProperty("ssl.key.password", security.storePassword());
            p.setProperty("ssl.truststore.type", "PKCS12");
            p.setProperty("ssl.truststore.location", security.truststore().toString());
            p.setProperty("ssl.truststore.password", security.storePassword());
        }
        if (link != null) {
            if (security != null) {
                throw new IllegalArgumentException("a LINK listener is plaintext: not on a secure broker");
            }
            p.setProperty("listeners", p.getProperty("listeners") + ",LINK://127.0.0.1:" + link.listenPort());
            p.setProperty("advertised.listeners", p.getProperty("advertised.listeners") + ",LINK://127.0.0.1:" + link.advertisedPort());
            p.setProperty("listener.security.protocol.map", p.getProperty("listener.security.protocol.map") + ",LINK:PLAINTEXT");
        }
        StringBuilder text = new StringBuilder("# written by kvr stack up\n");
        p.stringPropertyNames().stream().sorted().forEach(k -> text.append(k).append('=').append(p.getProperty(k)).append('\n'));
        return text.toString();
    }

    private static final String LOG4J2 = """
            status = warn
            appender.console.type = Console
            appender.console.name = console
            appender.console.layout.type = PatternLayout
            appender.console.layout.pattern = [%d] %p %m (%c)%n
            rootLogger.level = info
            rootLogger.appenderRef.console.ref = console
            logger.kafka.name = kafka
            logger.kafka.level = info
            logger.state.name = state.change.logger
            logger.state.level = warn
            logger.request.name = kafka.request.logger
            logger.request.level = warn
            """;

    static void write(Path file, String content) {
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, content, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }
}
