package dev.kvrouter.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * One private single-node Kafka broker on free loopback ports that a test can kill and start again
 * on the same ports and log dir, as a broker that crashed and restarted; optionally with a second
 * listener that a test reaches through a relay it can cut ({@link #startWithLink}).
 */
public final class LocalKafka implements AutoCloseable {

    private final Path dir;
    private final int brokerPort;
    private final int controllerPort;
    private final KafkaBroker.Link link;
    private Process process;

    private LocalKafka(Path dir, int brokerPort, int controllerPort, KafkaBroker.Link link) {
        this.dir = dir;
        this.brokerPort = brokerPort;
        this.controllerPort = controllerPort;
        this.link = link;
    }

    public static LocalKafka start(Path dir) {
        return start(new LocalKafka(dir, Ports.free(), Ports.free(), null));
    }

    /**
     * With a second listener for clients to reach through a relay: bootstrapped at {@link #linkBootstrap()},
     * a client keeps talking to that port, where the test relays to {@link #linkTargetPort()} (a
     * {@link TcpProxy} on {@link #linkPort()}); closing the relay cuts that client off the broker while
     * clients of {@link #bootstrap()} go on.
     */
    public static LocalKafka startWithLink(Path dir) {
        return start(new LocalKafka(dir, Ports.free(), Ports.free(), new KafkaBroker.Link(Ports.free(), Ports.free())));
    }

    private static LocalKafka start(LocalKafka kafka) {
        Path dir = kafka.dir;
        try {
            Files.createDirectories(dir.resolve("logs"));
            kafka.startBroker(true);
            return kafka;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (RuntimeException e) {
            kafka.close();
            throw e;
        }
    }

    private void startBroker(boolean fresh) {
        process = KafkaBroker.start(dir, brokerPort, controllerPort, "-Dkvr.test.kafka=" + dir, fresh, null, link);
        Processes.awaitAnswering(process, () -> KafkaBroker.answers(bootstrap()), Duration.ofSeconds(60),
                "the Kafka broker on port " + brokerPort, dir.resolve("logs").resolve("kafka.log"));
    }

    /** SIGKILL: no clean shutdown, as a crashed broker. */
    public void kill() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
            process.waitFor();
        }
    }

    /** Starts the broker again on the same ports and log dir, once it answers. */
    public void restart() {
        startBroker(false);
    }

    public String bootstrap() {
        return "127.0.0.1:" + brokerPort;
    }

    /** Where a client reaching the broker through the test's relay bootstraps (and stays). */
    public String linkBootstrap() {
        return "127.0.0.1:" + linkPort();
    }

    /** The port the test's relay listens on. */
    public int linkPort() {
        requireLink();
        return link.advertisedPort();
    }

    /** The broker's port the relay forwards to. */
    public int linkTargetPort() {
        requireLink();
        return link.listenPort();
    }

    private void requireLink() {
        if (link == null) {
            throw new IllegalStateException("this broker has no link listener: start it with startWithLink");
        }
    }

    @Override
    public void close() {
        if (process != null && process.isAlive()) {
            Processes.stop(List.of(process.toHandle()), Duration.ofSeconds(15));
        }
    }
}
