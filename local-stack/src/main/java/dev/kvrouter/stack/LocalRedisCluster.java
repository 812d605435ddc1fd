package dev.kvrouter.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A throwaway Redis Cluster of primaries on loopback, for tests: started from the same
 * redis-server the stack uses, slots assigned with {@code redis-cli --cluster create}, stopped by
 * pid in {@link #close()}.
 */
public final class LocalRedisCluster implements AutoCloseable {

    private final List<Process> nodes = new ArrayList<>();
    private final List<Integer> ports = new ArrayList<>();

    private LocalRedisCluster() {}

    public static LocalRedisCluster start(int primaries, Path dir) {
        return start(primaries, 0, dir);
    }

    /** {@code primaries} primaries, each with {@code replicasEach} replicas (a failover promotes one). */
    public static LocalRedisCluster start(int primaries, int replicasEach, Path dir) {
        LocalRedisCluster cluster = new LocalRedisCluster();
        try {
            Path redisServer = RedisServer.ensureExecutable(System.err);
            Path redisCli = redisServer.resolveSibling("redis-cli");
            Files.createDirectories(dir);
            for (int i = 0; i < primaries * (1 + replicasEach); i++) {
                int port = Ports.free();
                Path nodeDir = Files.createDirectories(dir.resolve("node-" + port));
                cluster.ports.add(port);
                cluster.nodes.add(Processes.startDetached(List.of(redisServer.toString(),
                        "--port", Integer.toString(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                        "--cluster-config-file", nodeDir.resolve("nodes.conf").toString(), "--dir", nodeDir.toString(),
                        "--save", "", "--appendonly", "no"), nodeDir, nodeDir.resolve("redis.log")));
            }
            for (int port : cluster.ports) {
                await(() -> RedisServer.answers("127.0.0.1", port), "node " + port);
            }
            List<String> create = new ArrayList<>(List.of(redisCli.toString(), "--cluster", "create"));
            cluster.ports.forEach(p -> create.add("127.0.0.1:" + p));
            create.addAll(List.of("--cluster-replicas", Integer.toString(replicasEach), "--cluster-yes"));
            int exit = Processes.runToCompletion(create, dir, dir.resolve("create.log"), Duration.ofSeconds(60));
            if (exit != 0) {
                throw new IllegalStateException("redis-cli --cluster create failed:\n" + Processes.tail(dir.resolve("create.log"), 20));
            }
            await(() -> clusterOk(redisCli, cluster.ports.get(0), dir), "cluster_state:ok");
            return cluster;
        } catch (IOException e) {
            cluster.close();
            throw new UncheckedIOException(e);
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    /** {@code redis-cluster://127.0.0.1:p1,127.0.0.1:p2,…}: every node as a seed. */
    public String url() {
        return "redis-cluster://" + String.join(",", ports.stream().map(p -> "127.0.0.1:" + p).toList());
    }

    public List<Integer> ports() {
        return List.copyOf(ports);
    }

    private static boolean clusterOk(Path redisCli, int port, Path dir) {
        Path out = dir.resolve("cluster-info.log");
        try {
            Files.deleteIfExists(out);
        } catch (IOException e) {
            return false;
        }
        Processes.runToCompletion(List.of(redisCli.toString(), "-p", Integer.toString(port), "cluster", "info"), dir, out,
                Duration.ofSeconds(10));
        try {
            return Files.readString(out).contains("cluster_state:ok");
        } catch (IOException e) {
            return false;
        }
    }

    private static void await(java.util.function.BooleanSupplier ready, String what) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!ready.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(what + " not ready within 30 s");
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
    }

    /** Stops every node this cluster started, by its process. */
    @Override
    public void close() {
        Processes.stop(nodes.stream().map(Process::toHandle).filter(ProcessHandle::isAlive).toList(), Duration.ofSeconds(10));
    }
}
