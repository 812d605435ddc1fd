package dev.kvrouter.stack;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A private nginx with the Lua module, from Debian's packages, running one configuration under its
 * own prefix directory (its pid file, logs and temporary files there; nothing under /etc or /var).
 * Runs in the foreground (the configuration says {@code daemon off}), so the process started is
 * nginx's master, stopped by its pid.
 */
public final class LocalNginx implements AutoCloseable {

    /** Set to use an nginx that is not on PATH. */
    public static final String EXECUTABLE_ENV = "KVR_NGINX";
    /** Set to a directory holding ndk_http_module.so and ngx_http_lua_module.so elsewhere than Debian puts them. */
    public static final String MODULES_ENV = "KVR_NGINX_MODULES";
    /**
     * What the gateway needs: nginx, its Lua module (with the NDK it loads), lua-resty-core
     * (ngx.balancer), lua-cjson for the request body, libxxhash0 for the block hashes.
     */
    public static final List<String> PACKAGES = List.of("nginx", "libnginx-mod-http-lua", "lua-resty-core", "lua-cjson", "libxxhash0");
    private static final Path DEBIAN_MODULES = Path.of("/usr/lib/nginx/modules");
    private static final List<Path> NEEDED_FILES = List.of(
            Path.of("/usr/share/lua/5.1/ngx/balancer.lua"),
            Path.of("/usr/lib/x86_64-linux-gnu/lua/5.1/cjson.so"));

    private final Path prefix;
    private final Process process;

    private LocalNginx(Path prefix, Process process) {
        this.prefix = prefix;
        this.process = process;
    }

    /** The nginx executable, the packages installed first when any is missing (as root on Debian), else an error that says how. */
    public static Path ensureInstalled(PrintStream out) {
        java.util.Optional<Path> nginx = DebianPackages.find("nginx", EXECUTABLE_ENV);
        if (nginx.isEmpty() || (System.getenv(MODULES_ENV) == null && !everythingInstalled())) {
            DebianPackages.install("nginx with the Lua module is not installed", PACKAGES,
                    "or set " + EXECUTABLE_ENV + "=/path/to/nginx and " + MODULES_ENV + "=/dir/of/ngx_http_lua_module.so", out);
            nginx = DebianPackages.find("nginx", EXECUTABLE_ENV);
        }
        return nginx.orElseThrow(() -> new IllegalStateException("apt-get installed " + PACKAGES + " but nginx is not on PATH; set " + EXECUTABLE_ENV));
    }

    private static boolean everythingInstalled() {
        if (!Files.exists(DEBIAN_MODULES.resolve("ngx_http_lua_module.so"))) {
            return false;
        }
        if (NEEDED_FILES.stream().anyMatch(f -> !Files.exists(f))) {
            return false;
        }
        return Files.exists(Path.of("/usr/lib/x86_64-linux-gnu/libxxhash.so.0")) || Files.exists(Path.of("/lib/x86_64-linux-gnu/libxxhash.so.0"));
    }

    /** Where the Lua and NDK modules are ({@value #MODULES_ENV}, else Debian's directory). */
    public static Path modulesDirectory() {
        String configured = System.getenv(MODULES_ENV);
        return configured == null || configured.isBlank() ? DEBIAN_MODULES : Path.of(configured);
    }

    /**
     * Writes {@code config} to {@code prefix/nginx.conf}, checks it ({@code nginx -t}: an error shows
     * nginx's own message) and starts nginx; returns once it accepts connections on {@code port}.
     */
    public static LocalNginx start(Path prefix, String config, int port, PrintStream out) {
        Path nginx = ensureInstalled(out);
        try {
            for (String dir : List.of("logs", "tmp")) {
                Files.createDirectories(prefix.resolve(dir));
            }
            Files.writeString(prefix.resolve("nginx.conf"), config);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> command = List.of(nginx.toString(), "-p", prefix.toString(), "-c", prefix.resolve("nginx.conf").toString(),
                "-e", prefix.resolve("logs/error.log").toString());
        Path startLog = prefix.resolve("logs/start.log");
        java.util.List<String> test = new java.util.ArrayList<>(command);
        test.add("-t");
        if (Processes.runToCompletion(test, prefix, startLog, Duration.ofSeconds(30)) != 0) {
            throw new IllegalStateException("nginx refused the configuration " + prefix.resolve("nginx.conf") + ":\n" + Processes.tail(startLog, 20));
        }
        Process process = Processes.startDetached(command, prefix, startLog);
        LocalNginx started = new LocalNginx(prefix, process);
        try {
            Processes.awaitAnswering(process, () -> accepts(port), Duration.ofSeconds(30), "nginx on port " + port, prefix.resolve("logs/error.log"));
        } catch (RuntimeException e) {
            started.close();
            throw e;
        }
        return started;
    }

    private static boolean accepts(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Reloads the configuration (SIGHUP to the master): new workers start, the old ones finish what they serve. */
    public void reload() {
        try {
            new ProcessBuilder("kill", "-HUP", Long.toString(process.pid())).start().waitFor();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public Path prefix() {
        return prefix;
    }

    public long pid() {
        return process.pid();
    }

    /** Stops nginx (SIGTERM to the master, which stops its workers; SIGKILL after the grace). */
    @Override
    public void close() {
        List<ProcessHandle> ours = new java.util.ArrayList<>(process.descendants().toList());
        ours.add(0, process.toHandle());
        Processes.stop(ours.stream().filter(ProcessHandle::isAlive).toList(), Duration.ofSeconds(10));
    }
}
