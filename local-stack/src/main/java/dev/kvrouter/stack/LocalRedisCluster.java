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
    private StackSecurity security;
    private Path dir;
    private Path redisCli;

    private LocalRedisCluster() {}

    public static LocalRedisCluster start(int primaries, Path dir) {
        return start(primaries, 0, dir);
    }

    /** {@code primaries} primaries, each with {@code replicasEach} replicas (a failover promotes one). */
    public static LocalRedisCluster start(int primaries, int replicasEach, Path dir) {
        return start(primaries, replicasEach, dir, false);
    }

    /**
     * A cluster whose nodes take TLS only (the cluster bus too) and one ACL user, the default user
     * off, as the secure stack's Redis: {@link #clientConfig()} holds the settings to reach it.
     */
    public static LocalRedisCluster startSecure(int primaries, Path dir) {
        return start(primaries, 0, dir, true);
    }

    private static LocalRedisCluster start(int primaries, int replicasEach, Path dir, boolean secure) {
        LocalRedisCluster cluster = new LocalRedisCluster();
        try {
            Path redisServer = RedisServer.ensureExecutable(System.err);
            Path redisCli = redisServer.resolveSibling("redis-cli");
            Files.createDirectories(dir);
            StackSecurity security = secure ? StackSecurity.create(dir) : null;
            cluster.security = security;
            cluster.dir = dir;
            cluster.redisCli = redisCli;
            for (int i = 0; i < primaries * (1 + replicasEach); i++) {
                int port = Ports.free();
                Path nodeDir = Files.createDirectories(dir.resolve("node-" + port));
                cluster.ports.add(port);
                List<String> command = new ArrayList<>(List.of(redisServer.toString(),
                        "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                        "--cluster-config-file", nodeDir.resolve("nodes.conf").toString(), "--dir", nodeDir.toString(),
                        "--save", "", "--appendonly", "no"));
                if (security == null) {
                    command.addAll(List.of("--port", Integer.toString(port)));
                } else {
                    // The password only as its hash, so it is on no command line.
                    command.addAll(List.of("--port", "0", "--tls-port", Integer.toString(port), "--tls-cluster", "yes",
                            "--tls-replication", "yes", "--tls-cert-file", security.redisCertificate().toString(),
                            "--tls-key-file", security.redisKey().toString(), "--tls-ca-cert-file", security.caCertificate().toString(),
                            "--tls-auth-clients", "no", "--user", "default", "off",
                            "--user", StackSecurity.CLIENT_USER, "on", "#" + security.sha256("redis-password"), "~*", "&*", "+@all"));
                }
                cluster.nodes.add(Processes.startDetached(command, nodeDir, nodeDir.resolve("redis.log")));
            }
            for (int port : cluster.ports) {
                await(() -> RedisServer.answers("127.0.0.1", port, security), "node " + port);
            }
            List<String> create = new ArrayList<>(List.of(redisCli.toString(), "--cluster", "create"));
            cluster.ports.forEach(p -> create.add("127.0.0.1:" + p));
            create.addAll(List.of("--cluster-replicas", Integer.toString(replicasEach), "--cluster-yes"));
            create.addAll(cluster.cliSecurity());
            int exit = Processes.runToCompletion(create, dir, dir.resolve("create.log"), Duration.ofSeconds(60),
                    cluster.cliEnvironment());
            if (exit != 0) {
                throw new IllegalStateException("redis-cli --cluster create failed:\n" + Processes.tail(dir.resolve("create.log"), 20));
            }
            await(() -> cluster.cli(cluster.ports.get(0), "cluster", "info").contains("cluster_state:ok"), "cluster_state:ok");
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

    /** The client config of a secure cluster ({@code redis.*}: user, password by file, TLS, trust store); null for a plain one. */
    public Path clientConfig() {
        return security == null ? null : security.clientConfig();
    }

    /** redis-cli's TLS flags for a secure cluster (its password goes by the environment, see {@link #cliEnvironment()}). */
    private List<String> cliSecurity() {
        return security == null ? List.of()
                : List.of("--tls", "--cacert", security.caCertificate().toString(), "--user", StackSecurity.CLIENT_USER);
    }

    /** REDISCLI_AUTH for a secure cluster: redis-cli reads the password there, not from its command line. */
    private java.util.Map<String, String> cliEnvironment() {
        return security == null ? java.util.Map.of() : java.util.Map.of("REDISCLI_AUTH", security.secret("redis-password"));
    }

    /** A replica whose link to its primary is up (a new cluster's replicas sync first), within 30 s: its port. */
    public int replicaInSync() {
        int[] found = {0};
        await(() -> {
            for (int port : ports) {
                String replication = cli(port, "info", "replication");
                if (replication.contains("role:slave") && replication.contains("master_link_status:up")) {
                    found[0] = port;
                    return true;
                }
            }
            return false;
        }, "a replica in sync");
        return found[0];
    }

    /**
     * The replica takes its primary's slots ({@code CLUSTER FAILOVER TAKEOVER}: no vote of the other
     * primaries, so it completes on a cluster whose gossip is still settling, as an operator does when a
     * primary is gone for good); returns once it serves as a primary.
     */
    public void takeOver(int replicaPort) {
        String answer = cli(replicaPort, "cluster", "failover", "takeover");
        if (!answer.contains("OK")) {
            throw new IllegalStateException("CLUSTER FAILOVER TAKEOVER on " + replicaPort + " answered: " + answer);
        }
        await(() -> cli(replicaPort, "role").startsWith("master"), "the replica on " + replicaPort + " promoted");
    }

    /** One redis-cli command on a node; its output, empty when it could not run. */
    private String cli(int port, String... args) {
        Path out = dir.resolve("cli-" + port + ".log");
        List<String> command = new ArrayList<>(List.of(redisCli.toString(), "-p", Integer.toString(port)));
        command.addAll(cliSecurity());
        command.addAll(List.of(args));
        try {
            Files.deleteIfExists(out);
            Processes.runToCompletion(command, dir, out, Duration.ofSeconds(10), cliEnvironment());
            return Files.readString(out);
        } catch (IOException | RuntimeException e) {
            return "";
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
