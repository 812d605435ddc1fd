package dev.kvrouter.gateway;

import dev.kvrouter.common.cli.AvroTopicsOptions;
import dev.kvrouter.common.cli.RedisOption;
import dev.kvrouter.common.Durations;
import dev.kvrouter.contract.RedisSecurity;
import dev.kvrouter.stack.LocalNginx;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code kvr gateway}: nginx routing by the view, and the shipper of its access log. */
@Command(name = "gateway", mixinStandardHelpOptions = true,
        description = {"Run nginx (Debian's packages with the Lua module; installed when missing and running as root) in front of the "
                + "engines, routing OpenAI-compatible requests by the view, and ship its access log to the decisions and outcomes "
                + "topics. Redis, Kafka and the registry default to the running './kvr stack'. Stops on Ctrl-C or after --duration. "
                + "See gateway/README.md."})
public final class GatewayCommand implements Callable<Integer> {

    @Option(names = "--engine", paramLabel = "ID=HOST:PORT", required = true,
            description = "An engine, as the view names it, and where it serves (repeat for each).")
    Map<String, String> engines = new LinkedHashMap<>();

    @Option(names = "--model", required = true, description = "The served model name (the view's hashes are rooted in it, as the job's).")
    String model;

    @Option(names = "--listen", paramLabel = "PORT", defaultValue = "8080", description = "Loopback port nginx listens on (default: ${DEFAULT-VALUE}).")
    int listen;

    @Option(names = "--key-prefix", defaultValue = "kvr:", description = "The view's key prefix (the job's view.key-prefix; default: ${DEFAULT-VALUE}).")
    String keyPrefix;

    @Option(names = "--chunk-tokens", defaultValue = "16", description = "The view's chunk size in tokens (default: ${DEFAULT-VALUE}).")
    int chunkTokens;

    @Option(names = "--hold", defaultValue = "0s", description = "How long a request waits at the gateway while every engine is full (default: ${DEFAULT-VALUE}: never).")
    String hold;

    @Option(names = "--fail-timeout", defaultValue = "10s", paramLabel = "DURATION",
            description = "How long an engine a try failed on (refused, timed out, 502/503) is left out of the view's picks and of least "
                    + "connections, as nginx's own max_fails=1 fail_timeout (default: ${DEFAULT-VALUE}; 0s: never).")
    String failTimeout;

    @Option(names = "--workers", defaultValue = "1", description = "nginx worker processes (default: ${DEFAULT-VALUE}).")
    int workers;

    @Option(names = "--dir", defaultValue = ".kvr/gateway", description = "Where nginx keeps its configuration, logs and pid file (default: ${DEFAULT-VALUE}).")
    Path dir;

    @Option(names = "--no-ship", description = "Do not publish the access log to Kafka (implied by any --balance but view).")
    boolean noShip;

    @Option(names = "--balance", defaultValue = "view", paramLabel = "BALANCER",
            description = "What picks the engine: view (the Lua library and the view), or stock nginx with no Lua, for comparison: "
                    + "round-robin, least-conn, client-hash (hash on the client header, consistent). Default: ${DEFAULT-VALUE}.")
    String balance;

    @Option(names = "--duration", paramLabel = "DURATION", description = "Stop after this long, e.g. 90s or 10m (default: run until Ctrl-C).")
    String duration;

    @Mixin
    RedisOption redis;

    @Mixin
    AvroTopicsOptions topics;

    @Override
    public Integer call() throws Exception {
        URI redisUrl = URI.create(redis.value());
        if (!"redis".equals(redisUrl.getScheme()) && !"rediss".equals(redisUrl.getScheme()) || redisUrl.getUserInfo() != null) {
            throw new IllegalArgumentException("--redis-url: the gateway speaks to one Redis over redis://host:port or rediss://host:port "
                    + "(no Redis Cluster; credentials go in the client config, redis.user and redis.password), got "
                    + RedisSecurity.redactUrl(redisUrl.toString()));
        }
        NginxGateway.Balancer balancer = NginxGateway.Balancer.of(balance);
        // Stock nginx writes no decisions: there is nothing to ship.
        boolean ship = !noShip && balancer == NginxGateway.Balancer.VIEW;
        if (ship) {
            topics.requireServices();
        }
        NginxGateway gateway = NginxGateway.of(listen, engines, redisUrl.getHost(), redisUrl.getPort(), model).withKeyPrefix(keyPrefix)
                .withChunkTokens(chunkTokens).withHold(Durations.parse(hold))
                .withFailTimeout(Durations.parse(failTimeout)).withWorkers(workers).withBalancer(balancer);
        Path prefix = dir.toAbsolutePath();
        gateway = gateway.withRedisAccess(redisAccess(topics.clientConfig.load().redis(), "rediss".equals(redisUrl.getScheme()), prefix));
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch stopped = new CountDownLatch(1);
        // Ctrl-C or SIGTERM: the loop below ends, and the hook waits (bounded) until nginx is stopped and
        // the last lines shipped — without the wait the JVM would exit first and leave nginx running.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stop.countDown();
            try {
                stopped.await(30, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        long until = duration == null ? Long.MAX_VALUE : System.nanoTime() + Durations.parse(duration).toNanos();
        try {
            serve(gateway, prefix, ship, balancer, redisUrl, stop, until);
        } finally {
            stopped.countDown();
        }
        return 0;
    }

    private void serve(NginxGateway gateway, Path prefix, boolean ship, NginxGateway.Balancer balancer, URI redisUrl, CountDownLatch stop,
                       long until) throws Exception {
        try (LocalNginx nginx = LocalNginx.start(prefix, gateway.render(prefix, LocalNginx.modulesDirectory()), listen, System.err);
             AccessLogShipper shipper = !ship ? null : new AccessLogShipper(prefix.resolve("logs/kvr-access.log"),
                     prefix.resolve("logs/kvr-access.position"), topics.kafka.value(), topics.registry.value(), topics.prefix(), model,
                     topics.clientConfig.load(), 1 << 20)) {
            System.err.printf("kvr gateway: nginx (pid %d) on http://127.0.0.1:%d routing %s %s; logs in %s%n", nginx.pid(), listen,
                    List.copyOf(engines.keySet()), balancer == NginxGateway.Balancer.VIEW ? "by the view at " + redisUrl + " (keys " + keyPrefix + ")"
                            : "by nginx's " + balancer.label(), prefix.resolve("logs"));
            while (System.nanoTime() < until && stop.getCount() > 0) {
                if (shipper != null) {
                    shipper.shipAvailable();
                }
                stop.await(200, java.util.concurrent.TimeUnit.MILLISECONDS);
            }
            if (shipper != null) {
                shipper.shipAvailable();
                System.err.printf("kvr gateway: shipped %d decisions, %d outcomes, %d dead letters%n", shipper.decisions(), shipper.outcomes(),
                        shipper.deadLetters());
            }
        }
    }

    /**
     * The client config's Redis settings as the Lua library takes them. The password goes to an
     * owner-only file under the gateway's directory, which nginx reads once when it starts: it is on
     * no command line and in no configuration file.
     */
    static NginxGateway.RedisAccess redisAccess(Map<String, String> settings, boolean tlsByUrl, Path prefix) throws java.io.IOException {
        RedisSecurity security = RedisSecurity.fromConfig(settings);
        Path passwordFile = null;
        if (security.password() != null) {
            Path secrets = java.nio.file.Files.createDirectories(prefix.resolve("secrets"));
            passwordFile = secrets.resolve("redis-password");
            java.nio.file.Files.deleteIfExists(passwordFile);
            java.nio.file.Files.createFile(passwordFile, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                    java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
            java.nio.file.Files.writeString(passwordFile, security.password());
        }
        String ca = settings.get(RedisSecurity.CA_LOCATION);
        return new NginxGateway.RedisAccess(security.user(), passwordFile, security.tls() || tlsByUrl, ca == null || ca.isBlank() ? null : Path.of(ca),
                !"none".equals(security.verify()), "full".equals(security.verify()));
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new GatewayCommand()).execute(args));
    }
}
