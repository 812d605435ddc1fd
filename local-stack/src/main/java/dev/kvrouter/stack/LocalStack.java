package dev.kvrouter.stack;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

/**
 * A local stack of real services on 127.0.0.1: Kafka (KRaft), Apicurio Registry and Redis, each
 * in its own process on free ports. Everything it knows lives in one state folder: the state file
 * (pids, ports, addresses), the services' data and config, and {@code logs/}.
 *
 * <p>{@link #up()} reuses a running stack; {@link #down()} stops, by pid, exactly the processes
 * this folder's stack started, even when the {@code up} that started them was killed.
 */
public final class LocalStack {

    /**
     * Settings of a stack; {@link #defaults(Path)} suits a developer machine. {@code secure}: Kafka on
     * SASL_SSL (SCRAM-SHA-512) and Redis on TLS with an ACL user ({@link StackSecurity}).
     */
    public record Options(Path stateDir, Path mavenRepo, Path cacheDir, Duration readyTimeout, PrintStream out, boolean secure) {
        public static Options defaults(Path stateDir) {
            Path home = Path.of(System.getProperty("user.home"));
            Path mavenRepo = Optional.ofNullable(System.getProperty("maven.repo.local")).map(Path::of)
                    .orElse(home.resolve(".m2").resolve("repository"));
            Path cache = Optional.ofNullable(System.getenv("XDG_CACHE_HOME")).map(Path::of)
                    .orElse(home.resolve(".cache")).resolve("kv-router");
            return new Options(stateDir.toAbsolutePath().normalize(), mavenRepo, cache, Duration.ofSeconds(120), System.out, false);
        }

        public Options withOut(PrintStream newOut) {
            return new Options(stateDir, mavenRepo, cacheDir, readyTimeout, newOut, secure);
        }

        public Options withReadyTimeout(Duration timeout) {
            return new Options(stateDir, mavenRepo, cacheDir, timeout, out, secure);
        }

        /** A secure stack: credentials and TLS on Kafka and Redis. */
        public Options withSecurity(boolean on) {
            return new Options(stateDir, mavenRepo, cacheDir, readyTimeout, out, on);
        }
    }

    /** What {@link #status()} found for one service. */
    public record ServiceStatus(Service service, OptionalLong pid, boolean running, boolean answering, String address) {}

    private final Options options;
    private final String marker;

    public LocalStack(Options options) {
        this.options = options;
        // Every JVM of this stack carries it, so down() finds them even without a recorded pid.
        this.marker = "-Dkvr.stack.dir=" + options.stateDir();
    }

    public static LocalStack at(Path stateDir) {
        return new LocalStack(Options.defaults(stateDir));
    }

    public Path stateDir() {
        return options.stateDir();
    }

    /** Starts the stack, or returns the addresses of the one already running in this folder. */
    public StackAddresses up() {
        try (FolderLock ignored = lock()) {
            Optional<StackState> existing = StackState.read(options.stateDir());
            if (existing.isPresent()) {
                Optional<StackAddresses> running = existing.get().addresses();
                boolean healthy = running.isPresent() && allAnswer(existing.get());
                // A running stack is reused as it is (a demo runs on a secure one too), but asking for a
                // secure stack must not quietly give a plaintext one.
                if (healthy && options.secure() && running.get().clientConfig().isEmpty()) {
                    throw new IllegalStateException("a plaintext stack is running in " + options.stateDir()
                            + "; stop it with 'kvr stack down' before 'kvr stack up --secure'");
                }
                if (healthy) {
                    options.out().println("stack already running in " + options.stateDir() + ": reusing it");
                    return running.get();
                }
                options.out().println("stack in " + options.stateDir() + " is not healthy: stopping what is left of it");
                stopAll(existing.get());
            }
            try {
                return start();
            } catch (PortTakenException e) {
                // A port chosen free was taken before the service bound it (another process's outgoing
                // connection got it as its ephemeral port): everything stopped, once more on fresh ports.
                options.out().println("stack: " + e.getMessage() + "; starting again on other ports");
                return start();
            }
        }
    }

    /** A service exited during start-up saying its port was in use. */
    static final class PortTakenException extends IllegalStateException {
        PortTakenException(String message) {
            super(message);
        }
    }

    /** Stops every process of this folder's stack; returns the pids stopped. */
    public List<Long> down() {
        try (FolderLock ignored = lock()) {
            Optional<StackState> state = StackState.read(options.stateDir());
            List<Long> stopped = stopAll(state.orElse(StackState.empty(options.stateDir())));
            state.ifPresent(StackState::delete);
            return stopped;
        }
    }

    public List<ServiceStatus> status() {
        StackState state = StackState.read(options.stateDir()).orElse(StackState.empty(options.stateDir()));
        List<ServiceStatus> result = new ArrayList<>();
        for (Service service : Service.values()) {
            OptionalLong pid = pid(state, service);
            boolean running = pid.isPresent() && ours(state, service, pid.getAsLong()).isPresent();
            boolean answering = running && answers(state, service);
            result.add(new ServiceStatus(service, pid, running, answering, address(state, service).orElse("-")));
        }
        return result;
    }

    /** The addresses of the running stack in this folder, if it is up. */
    public Optional<StackAddresses> addresses() {
        return StackState.read(options.stateDir()).flatMap(StackState::addresses);
    }

    private StackAddresses start() {
        long t0 = System.nanoTime();
        Path dir = options.stateDir();
        try {
            Files.createDirectories(dir.resolve("logs"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir, e);
        }
        StackState state = StackState.empty(dir);
        Properties versions = versions();
        // Slow one-time preparations first, so the clock on the services is honest.
        Path redisExecutable = RedisServer.ensureExecutable(options.out());
        Path runnerJar = ApicurioRegistry.ensureRunnerJar(versions.getProperty("apicurio.version"),
                options.mavenRepo(), options.cacheDir(), options.out());
        long tPrepared = System.nanoTime();

        int kafkaPort = Ports.free();
        int controllerPort = Ports.free();
        int registryPort = Ports.free();
        int registryManagementPort = Ports.free();
        int redisPort = Ports.free();
        state.recordPort(Service.KAFKA, kafkaPort);
        state.recordPort(Service.REGISTRY, registryPort);
        state.recordPort(Service.REDIS, redisPort);

        StackSecurity security = options.secure() ? StackSecurity.create(dir) : null;
        String bootstrap = "127.0.0.1:" + kafkaPort;
        String apicurioUrl = "http://127.0.0.1:" + registryPort;
        // A secure stack's registry is reached through the gateway (TLS, basic auth) on a port of its own.
        int gatewayPort = security != null ? Ports.free() : 0;
        String registryUrl = (security != null ? "https://127.0.0.1:" + gatewayPort : apicurioUrl) + ApicurioRegistry.CCOMPAT_PATH;
        String redisUrl = (security != null ? "rediss" : "redis") + "://127.0.0.1:" + redisPort;
        Map<String, Object> kafkaClient = security != null ? security.client().kafka() : Map.of();
        try {
            // The registry is the slowest to boot; it starts while the broker's log dir is formatted.
            state.recordProcess(Service.REGISTRY,
                    ApicurioRegistry.start(dir, runnerJar, registryPort, registryManagementPort, marker).toHandle());
            if (security != null) {
                // Found and stopped by the stack's marker, as every JVM of the stack.
                Processes.startDetached(RegistryGateway.command(gatewayPort, apicurioUrl, security, marker), dir,
                        dir.resolve("logs").resolve("registry-gateway.log"));
            }
            state.recordProcess(Service.REDIS, RedisServer.start(dir, redisExecutable, redisPort, security).toHandle());
            state.recordProcess(Service.KAFKA, KafkaBroker.start(dir, kafkaPort, controllerPort, marker, true, security, null).toHandle());

            Map<Service, BooleanSupplier> checks = new EnumMap<>(Service.class);
            checks.put(Service.KAFKA, () -> KafkaBroker.answers(bootstrap, kafkaClient));
            checks.put(Service.REGISTRY, () -> ApicurioRegistry.answers(registryUrl, security));
            checks.put(Service.REDIS, () -> RedisServer.answers("127.0.0.1", redisPort, security));
            awaitReady(state, checks);
        } catch (RuntimeException e) {
            options.out().println("stack failed to start; stopping what was started");
            stopAll(state);
            state.delete();
            throw e;
        }
        StackAddresses addresses = new StackAddresses(bootstrap, registryUrl, redisUrl,
                security != null ? security.clientConfig().toString() : "");
        state.recordReady(addresses);
        long now = System.nanoTime();
        options.out().printf("stack ready in %.1f s (services %.1f s, one-time preparation %.1f s); logs in %s%n",
                (now - t0) / 1e9, (now - tPrepared) / 1e9, (tPrepared - t0) / 1e9, dir.resolve("logs"));
        return addresses;
    }

    /** How Kafka, Apicurio (Quarkus) and redis-server say in their logs that their port was taken. */
    static final java.util.regex.Pattern PORT_IN_USE =
            java.util.regex.Pattern.compile("(?i)address already in use|port \\d+ seems to be in use|could not create server tcp listening socket");

    private void awaitReady(StackState state, Map<Service, BooleanSupplier> checks) {
        long deadline = System.nanoTime() + options.readyTimeout().toNanos();
        Map<Service, CompletableFuture<Void>> waits = new EnumMap<>(Service.class);
        checks.forEach((service, check) -> waits.put(service, CompletableFuture.runAsync(() -> {
            while (!check.getAsBoolean()) {
                OptionalLong pid = state.pid(service);
                if (pid.isEmpty() || ours(state, service, pid.getAsLong()).isEmpty()) {
                    throw new IllegalStateException(service.key() + " exited during start-up");
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(service.key() + " did not answer within " + options.readyTimeout());
                }
                sleep(200);
            }
        })));
        List<String> failures = new ArrayList<>();
        waits.forEach((service, wait) -> {
            try {
                wait.join();
            } catch (RuntimeException e) {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                Path log = options.stateDir().resolve("logs").resolve(service.key() + ".log");
                failures.add(cause.getMessage() + "; last lines of " + log + ":\n" + Processes.tail(log, 15));
            }
        });
        if (!failures.isEmpty()) {
            String message = "the local stack did not start:\n" + String.join("\n", failures);
            boolean portTaken = failures.stream().anyMatch(f -> f.contains("exited during start-up") && PORT_IN_USE.matcher(f).find());
            throw portTaken ? new PortTakenException(message) : new IllegalStateException(message);
        }
    }

    /**
     * Stops the recorded processes, redis by the pid file it writes itself, and any JVM still carrying
     * this stack's marker (an {@code up} killed between starting a process and recording its pid).
     */
    private List<Long> stopAll(StackState state) {
        Set<ProcessHandle> targets = new LinkedHashSet<>();
        for (Service service : Service.values()) {
            OptionalLong pid = pid(state, service);
            if (pid.isPresent()) {
                ours(state, service, pid.getAsLong()).ifPresent(targets::add);
            }
        }
        targets.addAll(Processes.withMarker(marker));
        return Processes.stop(new ArrayList<>(targets), Duration.ofSeconds(20));
    }

    private OptionalLong pid(StackState state, Service service) {
        OptionalLong recorded = state.pid(service);
        if (recorded.isPresent() || service != Service.REDIS) {
            return recorded;
        }
        try {
            return OptionalLong.of(Long.parseLong(Files.readString(RedisServer.pidFile(options.stateDir())).trim()));
        } catch (IOException | NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    private Optional<ProcessHandle> ours(StackState state, Service service, long pid) {
        if (service == Service.REDIS) {
            // redis-server rewrites its process title to "redis-server 127.0.0.1:<port>"; the start
            // time, when recorded, or that title identifies it.
            OptionalInt port = state.port(Service.REDIS);
            String title = port.isPresent() ? "127.0.0.1:" + port.getAsInt() : "redis-server";
            return Processes.ours(pid, state.startedMillis(service), title)
                    .filter(p -> Processes.commandLine(p).contains("redis-server"));
        }
        return Processes.ours(pid, state.startedMillis(service), marker);
    }

    private boolean allAnswer(StackState state) {
        for (Service service : Service.values()) {
            OptionalLong pid = pid(state, service);
            if (pid.isEmpty() || ours(state, service, pid.getAsLong()).isEmpty() || !answers(state, service)) {
                return false;
            }
        }
        return true;
    }

    private boolean answers(StackState state, Service service) {
        Optional<StackAddresses> a = state.addresses();
        if (a.isEmpty()) {
            return false;
        }
        StackSecurity security = a.get().clientConfig().isEmpty() ? null : StackSecurity.existing(options.stateDir());
        if (!a.get().clientConfig().isEmpty() && security == null) {
            return false; // a secure stack whose material is gone cannot be reached
        }
        return switch (service) {
            case KAFKA -> KafkaBroker.answers(a.get().kafkaBootstrap(), security == null ? Map.of() : security.client().kafka());
            case REGISTRY -> ApicurioRegistry.answers(a.get().schemaRegistryUrl(), security);
            case REDIS -> RedisServer.answers("127.0.0.1", state.port(Service.REDIS).orElse(-1), security);
        };
    }

    private Optional<String> address(StackState state, Service service) {
        return state.addresses().map(a -> switch (service) {
            case KAFKA -> a.kafkaBootstrap();
            case REGISTRY -> a.schemaRegistryUrl();
            case REDIS -> a.redisUrl();
        });
    }

    /** One {@code up} or {@code down} at a time per folder; the OS frees the lock if we are killed. */
    private FolderLock lock() {
        try {
            Files.createDirectories(options.stateDir());
            FileChannel channel = FileChannel.open(options.stateDir().resolve("stack.lock"),
                    StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            if (channel.tryLock() == null) {
                options.out().println("another 'stack up/down' holds " + options.stateDir() + "; waiting for it");
                channel.lock();
            }
            return new FolderLock(channel);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot lock " + options.stateDir(), e);
        }
    }

    /** Closing the channel releases its lock. */
    private record FolderLock(FileChannel channel) implements AutoCloseable {
        @Override
        public void close() {
            try {
                channel.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    static Properties versions() {
        Properties p = new Properties();
        try (InputStream in = LocalStack.class.getResourceAsStream("kvr-stack-versions.properties")) {
            if (in == null) {
                throw new IllegalStateException("kvr-stack-versions.properties missing: build kvr-local-stack with Maven");
            }
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return p;
    }

    static String javaExecutable() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
