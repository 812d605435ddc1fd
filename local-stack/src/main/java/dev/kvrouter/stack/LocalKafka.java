package dev.kvrouter.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * One private single-node Kafka broker on free loopback ports that a test can kill and start again
 * on the same ports and log dir, as a broker that crashed and restarted.
 */
public final class LocalKafka implements AutoCloseable {

    private final Path dir;
    private final int brokerPort;
    private final int controllerPort;
    private Process process;

    private LocalKafka(Path dir, int brokerPort, int controllerPort) {
        this.dir = dir;
        this.brokerPort = brokerPort;
        this.controllerPort = controllerPort;
    }

    public static LocalKafka start(Path dir) {
        LocalKafka kafka = new LocalKafka(dir, Ports.free(), Ports.free());
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
        process = KafkaBroker.start(dir, brokerPort, controllerPort, "-Dkvr.test.kafka=" + dir, fresh, null);
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

    @Override
    public void close() {
        if (process != null && process.isAlive()) {
            Processes.stop(List.of(process.toHandle()), Duration.ofSeconds(15));
        }
    }
}
