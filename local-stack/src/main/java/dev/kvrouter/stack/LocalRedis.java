package dev.kvrouter.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * One private redis-server on a free loopback port, without persistence, that a test can restart:
 * the same address comes back empty, with a new run id and no functions, as a production Redis
 * without persistence does after a crash.
 */
public final class LocalRedis implements AutoCloseable {

    private final Path dir;
    private final int port;
    private Process process;

    private LocalRedis(Path dir, int port) {
        this.dir = dir;
        this.port = port;
    }

    public static LocalRedis start(Path dir) {
        LocalRedis redis = new LocalRedis(dir, Ports.free());
        try {
            Files.createDirectories(dir);
            redis.startServer();
            return redis;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (RuntimeException e) {
            redis.close();
            throw e;
        }
    }

    private void startServer() {
        Path redisServer = RedisServer.ensureExecutable(System.err);
        process = Processes.startDetached(List.of(redisServer.toString(), "--port", Integer.toString(port),
                "--bind", "127.0.0.1", "--dir", dir.toString(), "--save", "", "--appendonly", "no"), dir, dir.resolve("redis.log"));
        Processes.awaitAnswering(process, () -> RedisServer.answers("127.0.0.1", port), Duration.ofSeconds(30),
                "redis-server on port " + port, dir.resolve("redis.log"));
    }

    /** Kills the server (SIGKILL: nothing is saved) and starts an empty one on the same port. */
    public void restartEmpty() {
        stop();
        startServer();
    }

    /** Kills the server; {@link #restartEmpty()} brings an empty one back. */
    public void stop() {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    public int port() {
        return port;
    }

    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    @Override
    public void close() {
        if (process != null) {
            Processes.stop(List.of(process.toHandle()).stream().filter(ProcessHandle::isAlive).toList(), Duration.ofSeconds(10));
        }
    }
}
