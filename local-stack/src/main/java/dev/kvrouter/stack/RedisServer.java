package dev.kvrouter.stack;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A private redis-server on a free loopback port: no persistence, its own pid file. */
final class RedisServer {

    /** Set to use a redis-server that is not on PATH. */
    static final String EXECUTABLE_ENV = "KVR_REDIS_SERVER";
    private static final Pattern VERSION = Pattern.compile("v=(\\d+)\\.(\\d+)\\.(\\d+)");

    private RedisServer() {}

    static Process start(Path stateDir, Path executable, int port) {
        Path dir = stateDir.resolve("redis");
        KafkaBroker.write(dir.resolve("redis.conf"), String.join("\n",
                "bind 127.0.0.1",
                "port " + port,
                "protected-mode yes",
                "save \"\"",
                "appendonly no",
                "daemonize no",
                "dir " + dir,
                "pidfile " + pidFile(stateDir),
                "maxmemory 512mb",
                "maxmemory-policy noeviction",
                "") );
        return Processes.startDetached(List.of(executable.toString(), dir.resolve("redis.conf").toString()),
                dir, stateDir.resolve("logs").resolve("redis.log"));
    }

    /** Redis writes its own pid here, which covers an {@code up} killed between start and record. */
    static Path pidFile(Path stateDir) {
        return stateDir.resolve("redis").resolve("redis.pid");
    }

    static boolean answers(String host, int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 1000);
            socket.setSoTimeout(2000);
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String reply = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII)).readLine();
            return "+PONG".equals(reply);
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * redis-server from {@value #EXECUTABLE_ENV} or PATH; installed with apt when missing and running
     * as root; otherwise an error that says how to install it. Redis 7 or newer (Functions).
     */
    static Path ensureExecutable(PrintStream out) {
        Path found = find().orElse(null);
        if (found == null) {
            if (!isRoot() || find("apt-get").isEmpty()) {
                throw new IllegalStateException("redis-server (Redis 7 or newer) is not on PATH. Install it: "
                        + "'sudo apt-get install -y redis-server' (Debian/Ubuntu), 'brew install redis' (macOS), "
                        + "or set " + EXECUTABLE_ENV + "=/path/to/redis-server");
            }
            out.println("redis-server is missing: installing it with apt-get (once)");
            Path log = Path.of(System.getProperty("java.io.tmpdir"), "kvr-apt-redis.log");
            ProcessBuilder.Redirect append = ProcessBuilder.Redirect.appendTo(log.toFile());
            for (List<String> cmd : List.of(List.of("apt-get", "update", "-q"),
                    List.of("apt-get", "install", "-y", "-q", "--no-install-recommends", "redis-server"))) {
                ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(append);
                pb.environment().put("DEBIAN_FRONTEND", "noninteractive");
                try {
                    Process p = pb.start();
                    if (!p.waitFor(10, java.util.concurrent.TimeUnit.MINUTES) || p.exitValue() != 0) {
                        p.destroyForcibly();
                        throw new IllegalStateException(String.join(" ", cmd) + " failed; see " + log
                                + ":\n" + Processes.tail(log, 15));
                    }
                } catch (IOException e) {
                    throw new IllegalStateException("cannot run " + cmd.get(0) + ": " + e.getMessage(), e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while installing redis-server", e);
                }
            }
            found = find().orElseThrow(() -> new IllegalStateException(
                    "apt-get installed redis-server but it is not on PATH; set " + EXECUTABLE_ENV));
        }
        checkVersion(found);
        return found;
    }

    private static void checkVersion(Path executable) {
        try {
            Process p = new ProcessBuilder(executable.toString(), "--version").redirectErrorStream(true).start();
            String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
            Matcher m = VERSION.matcher(text);
            if (m.find() && Integer.parseInt(m.group(1)) < 7) {
                throw new IllegalStateException(executable + " is Redis " + m.group(1) + "." + m.group(2)
                        + "; kv-router needs Redis 7 or newer (Functions). Set " + EXECUTABLE_ENV + " to a newer one");
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + executable + " --version: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Optional<Path> find() {
        String configured = System.getenv(EXECUTABLE_ENV);
        if (configured != null && !configured.isBlank()) {
            Path p = Path.of(configured);
            if (!Files.isExecutable(p)) {
                throw new IllegalStateException(EXECUTABLE_ENV + "=" + configured + " is not an executable file");
            }
            return Optional.of(p);
        }
        return find("redis-server");
    }

    private static Optional<Path> find(String name) {
        List<String> dirs = new ArrayList<>(List.of(System.getenv().getOrDefault("PATH", "").split(":")));
        dirs.addAll(List.of("/usr/bin", "/usr/sbin", "/usr/local/bin", "/opt/homebrew/bin"));
        return dirs.stream().filter(d -> !d.isBlank()).map(d -> Path.of(d, name)).filter(Files::isExecutable).findFirst();
    }

    private static boolean isRoot() {
        try {
            Process p = new ProcessBuilder("id", "-u").start();
            String uid = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
            p.waitFor(5, java.util.concurrent.TimeUnit.SECONDS);
            return "0".equals(uid);
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
