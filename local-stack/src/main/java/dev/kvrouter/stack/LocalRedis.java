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
    private StackSecurity security;
    private Process process;

    private LocalRedis(Path dir, int port) {
        this.dir = dir;
        this.port = port;
    }

    public static LocalRedis start(Path dir) {
        return start(dir, false);
    }

    /**
     * As the secure stack's Redis: TLS only, one ACL user, the default user off; {@link #clientConfig()}
     * holds the settings to reach it.
     */
    public static LocalRedis startSecure(Path dir) {
        return start(dir, true);
    }

    private static LocalRedis start(Path dir, boolean secure) {
        LocalRedis redis = new LocalRedis(dir, Ports.free());
        try {
            Files.createDirectories(dir);
            redis.security = secure ? StackSecurity.create(dir) : null;
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
        if (security != null) {
            try {
                // RedisServer keeps its files under dir/redis and its log under dir/logs, as the stack's.
                Files.createDirectories(dir.resolve("redis"));
                Files.createDirectories(dir.resolve("logs"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            process = RedisServer.start(dir, redisServer, port, security);
            Processes.awaitAnswering(process, () -> RedisServer.answers("127.0.0.1", port, security), Duration.ofSeconds(30),
                    "redis-server (TLS) on port " + port, dir.resolve("logs").resolve("redis.log"));
            return;
        }
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
        return (security == null ? "redis://" : "rediss://") + "127.0.0.1:" + port;
    }

    /** The client config of a secure Redis ({@code redis.*}: user, password by file, TLS, trust stores); null for a plain one. */
    public Path clientConfig() {
        return security == null ? null : security.clientConfig();
    }

    /**
     * The client config of one role of a secure Redis, as {@code ./kvr stack up --secure} writes it:
     * {@code job}, {@code balancer} or {@code reader}, each its shipped least-privilege Redis user.
     */
    public Path clientConfig(String role) {
        if (security == null) {
            return null;
        }
        if (!StackSecurity.REDIS_USER_OF_ROLE.containsKey(role) && !StackSecurity.READER.equals(role)) {
            throw new IllegalArgumentException("no Redis user for role '" + role + "'; the roles are job, balancer and reader");
        }
        return security.roleClientConfig(role);
    }

    @Override
    public void close() {
        if (process != null) {
            Processes.stop(List.of(process.toHandle()).stream().filter(ProcessHandle::isAlive).toList(), Duration.ofSeconds(10));
        }
    }
}
