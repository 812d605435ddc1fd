package dev.kvrouter.stack;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A private redis-server on a free loopback port: no persistence, its own pid file. */
final class RedisServer {

    /** Set to use a redis-server that is not on PATH. */
    static final String EXECUTABLE_ENV = "KVR_REDIS_SERVER";
    private static final Pattern VERSION = Pattern.compile("v=(\\d+)\\.(\\d+)\\.(\\d+)");

    private RedisServer() {}

    static Process start(Path stateDir, Path executable, int port) {
        return start(stateDir, executable, port, null);
    }

    /**
     * With {@code security}: TLS only (no plaintext port) with the stack's server certificate, the
     * stack's own ACL user and the shipped least-privilege ones ({@link StackSecurity#redisUserDirectives}),
     * whose passwords Redis keeps as SHA-256 hashes; the default user is off.
     */
    static Process start(Path stateDir, Path executable, int port, StackSecurity security) {
        Path dir = stateDir.resolve("redis");
        String listen = security == null ? "port " + port : String.join("\n",
                "port 0",
                "tls-port " + port,
                "tls-cert-file " + security.redisCertificate(),
                "tls-key-file " + security.redisKey(),
                "tls-ca-cert-file " + security.caCertificate(),
                "tls-auth-clients no",
                String.join("\n", security.redisUserDirectives()));
        KafkaBroker.write(dir.resolve("redis.conf"), String.join("\n",
                "bind 127.0.0.1",
                listen,
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
        return answers(host, port, null);
    }

    /** True when Redis answers PING; over TLS and after AUTH as the client user with {@code security}. */
    static boolean answers(String host, int port, StackSecurity security) {
        try (Socket socket = security == null ? new Socket() : security.sslContext().getSocketFactory().createSocket()) {
            socket.connect(new InetSocketAddress(host, port), 1000);
            socket.setSoTimeout(2000);
            OutputStream out = socket.getOutputStream();
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
            if (security != null) {
                String user = StackSecurity.CLIENT_USER;
                String password = security.secret("redis-password");
                out.write(("*3\r\n$4\r\nAUTH\r\n$" + user.length() + "\r\n" + user + "\r\n$" + password.length() + "\r\n" + password
                        + "\r\n").getBytes(StandardCharsets.US_ASCII));
                out.flush();
                if (!"+OK".equals(in.readLine())) {
                    return false;
                }
            }
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            return "+PONG".equals(in.readLine());
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * redis-server from {@value #EXECUTABLE_ENV} or PATH; installed with apt when missing and running
     * as root; otherwise an error that says how to install it. Redis 7 or newer (Functions).
     */
    static Path ensureExecutable(PrintStream out) {
        Path found = DebianPackages.ensure("redis-server", "redis-server", EXECUTABLE_ENV, "'brew install redis' (macOS)", out);
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
}
