package dev.kvrouter.gateway;

import dev.kvrouter.contract.ViewLayout;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The gateway's configuration, one immutable value checked once (every problem reported at once),
 * and what it renders: the nginx configuration from {@code nginx.conf.template} and the Lua library
 * written out beside it. gateway/README.md describes each option.
 *
 * @param listenPort     the loopback port nginx listens on
 * @param engines        engine id (as the view names it) to {@code host:port}
 * @param redisHost      the view's Redis
 * @param redisPort      its port
 * @param redisTimeout   connect, send and read timeout of one call to the view (a pick waits no longer)
 * @param keyPrefix      the view's key prefix (the job's {@code view.key-prefix})
 * @param model          the served model name the canonical hashes are rooted in
 * @param chunkTokens    the view's chunk size in tokens (its meta's {@code chunk_tokens})
 * @param maxViewAge     older than this the view is not trusted: the pick answers on load alone
 * @param hold           how long a request waits at the gateway while every engine is full (0: never)
 * @param failTimeout    how long an engine a try failed on (refused, timed out, 502/503) is left out of the view's
 *                       picks and of least connections, as nginx's own {@code max_fails=1 fail_timeout} (0: never)
 * @param clientHeader   the request header that names the client (burst defence, client cap)
 * @param classHeader    the request header that names the prefix class
 * @param maxBodyBytes   the largest request body read; larger ones get 413
 * @param workers        nginx worker processes
 * @param readTimeout    how long nginx waits between two reads from an engine
 * @param balancer       what picks the engine: the view, or one of nginx's own balancers (for comparison)
 * @param redisAccess    how the Lua library reaches Redis: plaintext, or AUTH and TLS
 */
public record NginxGateway(int listenPort, Map<String, String> engines, String redisHost, int redisPort, Duration redisTimeout,
                           String keyPrefix, String model, int chunkTokens, Duration maxViewAge, Duration hold, Duration failTimeout,
                           String clientHeader, String classHeader, long maxBodyBytes, int workers, Duration readTimeout, Balancer balancer,
                           RedisAccess redisAccess) {

    /**
     * How the Lua library reaches Redis (the client config's {@code redis.*} settings, README
     * "Security"): an ACL user and the file holding its password (read once when nginx starts, so it
     * is in no configuration file), TLS with the certificates to trust as PEM, and whether the server's
     * certificate is checked.
     *
     * @param user          the ACL user; null: AUTH with the password alone (the default user), or no AUTH
     * @param passwordFile  a file holding the password; null: no AUTH
     * @param tls           TLS to Redis
     * @param caFile        PEM certificates to trust (nginx's {@code lua_ssl_trusted_certificate}); null: none
     * @param verify        check the server's certificate against them
     * @param checkHost     and check that it names the Redis host ({@code redis.ssl.verify=full}). nginx checks host
     *                      names, not addresses: the loopback address is checked as {@code localhost}, and another
     *                      address needs Redis given by name, or {@code redis.ssl.verify=ca}
     */
    public record RedisAccess(String user, Path passwordFile, boolean tls, Path caFile, boolean verify, boolean checkHost) {
        /** Plaintext, no AUTH. */
        public static final RedisAccess PLAIN = new RedisAccess(null, null, false, null, false, false);

        List<String> problems() {
            List<String> problems = new ArrayList<>();
            if (user != null && passwordFile == null) {
                problems.add("Redis user " + user + " without a password file");
            }
            if (tls && verify && caFile == null) {
                problems.add("Redis TLS with verification needs the certificates to trust as PEM (redis.ssl.ca.location)");
            }
            if (checkHost && !verify) {
                problems.add("Redis TLS: the host is checked only with the certificate verified");
            }
            return problems;
        }
    }

    /**
     * What picks the engine. {@code VIEW}: the Lua library and the view ({@code nginx.conf.template}).
     * The others are stock nginx, no Lua ({@code nginx-stock.conf.template}), for comparison beside it:
     * round robin, {@code least_conn}, and {@code hash} on the client header, consistent.
     */
    public enum Balancer {
        VIEW, ROUND_ROBIN, LEAST_CONN, CLIENT_HASH;

        /** As the command line names it: view, round-robin, least-conn, client-hash. */
        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
        }

        public static Balancer of(String label) {
            for (Balancer b : values()) {
                if (b.label().equals(label)) {
                    return b;
                }
            }
            throw new IllegalArgumentException("balancer '" + label + "': one of view, round-robin, least-conn, client-hash");
        }
    }

    /**
     * The Lua library, as nginx's lua_package_path finds it: {@code kvr/<name>.lua}; {@code kvr/contract.lua} is the
     * view's contract, generated in view-contract ({@link ViewLayout#gatewayContractLua()}).
     */
    public static final List<String> LUA_FILES = List.of("kvr/contract.lua", "kvr/resp.lua", "kvr/blockhash.lua", "kvr/gateway.lua");
    private static final String RESOURCES = "/dev/kvrouter/gateway/";
    private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([a-z_]+)}");
    private static final Pattern ENGINE_ID = Pattern.compile("[^,=|\\s]+");
    private static final Pattern ADDRESS = Pattern.compile("[A-Za-z0-9.\\-]+:\\d{1,5}");
    private static final Pattern HEADER = Pattern.compile("[A-Za-z0-9-]+");

    public NginxGateway {
        engines = Map.copyOf(new LinkedHashMap<>(engines));
        List<String> problems = new ArrayList<>();
        if (listenPort < 1 || listenPort > 65535) {
            problems.add("listen port: 1-65535, got " + listenPort);
        }
        if (engines.isEmpty()) {
            problems.add("engines: at least one id=host:port");
        }
        engines.forEach((id, address) -> {
            if (!ENGINE_ID.matcher(id).matches()) {
                problems.add("engine id '" + id + "': as the view names it, without , = | or spaces");
            }
            if (!ADDRESS.matcher(address).matches()) {
                problems.add("engine " + id + ": host:port, got '" + address + "'");
            }
        });
        if (redisPort < 1 || redisPort > 65535) {
            problems.add("Redis port: 1-65535, got " + redisPort);
        }
        if (redisTimeout.isNegative() || redisTimeout.isZero()) {
            problems.add("Redis timeout: above 0, got " + redisTimeout);
        }
        if (keyPrefix.contains("{") || keyPrefix.contains("}")) {
            problems.add("key prefix: no braces (they make Redis Cluster hash tags), got '" + keyPrefix + "'");
        }
        if (model == null || model.isBlank()) {
            problems.add("model: the served model name the view's hashes are rooted in");
        }
        if (chunkTokens < 1) {
            problems.add("chunk tokens: at least 1, got " + chunkTokens);
        }
        if (maxViewAge.isNegative()) {
            problems.add("max view age: 0 or more, got " + maxViewAge);
        }
        if (hold.isNegative() || hold.toMillis() > 600_000) {
            problems.add("hold: 0 (never) to 10 min, got " + hold);
        }
        if (failTimeout.isNegative() || failTimeout.toMillis() > 600_000) {
            problems.add("fail timeout: 0 (never leave a failed engine out) to 10 min, got " + failTimeout);
        }
        for (String header : List.of(clientHeader, classHeader)) {
            if (!HEADER.matcher(header).matches()) {
                problems.add("header name '" + header + "': letters, digits and '-'");
            }
        }
        if (maxBodyBytes < 1024) {
            problems.add("max body: at least 1024 bytes, got " + maxBodyBytes);
        }
        if (workers < 1) {
            problems.add("workers: at least 1, got " + workers);
        }
        if (balancer == null) {
            problems.add("balancer: view, round-robin, least-conn or client-hash");
        }
        if (redisAccess == null) {
            problems.add("Redis access: plaintext, or AUTH and TLS");
        } else {
            problems.addAll(redisAccess.problems());
            if (redisAccess.tls() && redisAccess.checkHost() && redisHost.matches("[0-9.]+|\\[?[0-9a-fA-F:]+]?") && !tlsHostName(redisHost).equals("localhost")) {
                problems.add("Redis TLS checks the certificate's host name and nginx checks names, not addresses: give Redis by name "
                        + "instead of " + redisHost + ", or set redis.ssl.verify=ca");
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("the gateway's configuration has " + problems.size() + " problem(s):\n  "
                    + String.join("\n  ", problems));
        }
    }

    /**
     * How long one pick may take before the request goes to least connections: the Java client's default
     * (DefaultsAgreeTest). A burst's picks queue behind each other in Redis: at 50 ms, a burst of a hundred requests on a
     * busy primary went to least connections whole.
     */
    public static final Duration DEFAULT_REDIS_TIMEOUT = Duration.ofMillis(100);

    /**
     * The defaults: one worker, the view's defaults, no holding, a failed engine left out 10 s, 8 MiB bodies, a
     * {@link #DEFAULT_REDIS_TIMEOUT}.
     */
    public static NginxGateway of(int listenPort, Map<String, String> engines, String redisHost, int redisPort, String model) {
        return new NginxGateway(listenPort, engines, redisHost, redisPort, DEFAULT_REDIS_TIMEOUT, ViewLayout.DEFAULT_KEY_PREFIX, model,
                ViewLayout.DEFAULT_CHUNK_TOKENS, Duration.ofSeconds(2), Duration.ZERO, Duration.ofSeconds(10), "X-Client-Id", "X-Prefix-Class", 8L << 20, 1,
                Duration.ofMinutes(10), Balancer.VIEW, RedisAccess.PLAIN);
    }

    public NginxGateway withKeyPrefix(String prefix) {
        return new NginxGateway(listenPort, engines, redisHost, redisPort, redisTimeout, prefix, model, chunkTokens, maxViewAge, hold, failTimeout,
                clientHeader, classHeader, maxBodyBytes, workers, readTimeout, balancer, redisAccess);
    }

    public NginxGateway withChunkTokens(int tokens) {
        return new NginxGateway(listenPort, engines, redisHost, redisPort, redisTimeout, keyPrefix, model, tokens, maxViewAge, hold, failTimeout,
                clientHeader, classHeader, maxBodyBytes, workers, readTimeout, balancer, redisAccess);
    }

    public NginxGateway withHold(Duration h) {
        return new NginxGateway(listenPort, engines, redisHost, redisPort, redisTimeout, keyPrefix, model, chunkTokens, maxViewAge, h, failTimeout,
                clientHeader, classHeader, maxBodyBytes, workers, readTimeout, balancer, redisAccess);
    }

    public NginxGateway withFailTimeout(Duration t) {
        return new NginxGateway(listenPort, engines, redisHost, redisPort, redisTimeout, keyPrefix, model, chunkTokens, maxViewAge, hold, t,
                clientHeader, classHeader, maxBodyBytes, workers, readTimeout, balancer, redisAccess);
    }

    public NginxGateway withMaxBodyBytes(long bytes) {
        return new NginxGateway(listenPort, engines, redisHost, redisPort, redisTimeout, keyPrefix, model, chunkTokens, maxViewAge, hold, failTimeout,
                clientHeader, classHeader, bytes, workers, readTimeout, balancer, redisAccess);
    }

    /** Stock nginx balancing instead of the view, for comparison. */
    public NginxGateway withBalancer(Balancer b) {
        return new NginxGateway(listenPort, engines, redisHost, redisPort, redisTimeout, keyPrefix, model, chunkTokens, maxViewAge, hold, failTimeout,
                clientHeader, classHeader, maxBodyBytes, workers, readTimeout, b, redisAccess);
    }

    public NginxGateway withListenPort(int port) {
        return new NginxGateway(port, engines, redisHost, redisPort, redisTimeout, keyPrefix, model, chunkTokens, maxViewAge, hold, failTimeout,
                clientHeader, classHeader, maxBodyBytes, workers, readTimeout, balancer, redisAccess);
    }

    /** AUTH and TLS to Redis. */
    public NginxGateway withRedisAccess(RedisAccess access) {
        return new NginxGateway(listenPort, engines, redisHost, redisPort, redisTimeout, keyPrefix, model, chunkTokens, maxViewAge, hold, failTimeout,
                clientHeader, classHeader, maxBodyBytes, workers, readTimeout, balancer, access);
    }

    public NginxGateway withWorkers(int n) {
        return new NginxGateway(listenPort, engines, redisHost, redisPort, redisTimeout, keyPrefix, model, chunkTokens, maxViewAge, hold, failTimeout,
                clientHeader, classHeader, maxBodyBytes, n, readTimeout, balancer, redisAccess);
    }

    /**
     * Writes the Lua library under {@code prefix/lua} and returns the nginx configuration for a
     * gateway whose pid file, logs and temporary files live under {@code prefix}.
     */
    public String render(Path prefix, Path modules) {
        Map<String, String> values = new LinkedHashMap<>();
        values.put("workers", Integer.toString(workers));
        values.put("prefix", prefix.toString());
        values.put("listen", "127.0.0.1:" + listenPort);
        values.put("max_body", Long.toString(maxBodyBytes));
        values.put("read_timeout", readTimeout.toSeconds() + "s");
        values.put("access_log", prefix.resolve("logs/kvr-access.log").toString());
        if (balancer != Balancer.VIEW) {
            values.put("balance", switch (balancer) {
                case LEAST_CONN -> "least_conn;";
                case CLIENT_HASH -> "hash $http_" + clientHeader.toLowerCase(java.util.Locale.ROOT).replace('-', '_') + " consistent;";
                default -> "# round robin (nginx's default)";
            });
            StringBuilder servers = new StringBuilder();
            engines.entrySet().stream().sorted(Map.Entry.comparingByKey())
                    .forEach(e -> servers.append("server ").append(e.getValue()).append("; # ").append(e.getKey()).append("\n        "));
            values.put("servers", servers.toString().strip());
            return fill("nginx-stock.conf.template", values);
        }
        Path lua = prefix.resolve("lua");
        writeLuaLibrary(lua);
        values.put("modules", modules.toString());
        values.put("lua", lua.toString());
        values.put("gateway_config", luaConfig());
        values.put("lua_ssl", redisAccess.tls() && redisAccess.caFile() != null
                ? "lua_ssl_trusted_certificate " + redisAccess.caFile().toAbsolutePath() + ";\n    lua_ssl_verify_depth 3;"
                : "# (no TLS to Redis)");
        return fill("nginx.conf.template", values);
    }

    private static String fill(String templateName, Map<String, String> values) {
        Matcher m = PLACEHOLDER.matcher(resource(templateName));
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String value = values.get(m.group(1));
            if (value == null) {
                throw new IllegalStateException(templateName + ": no value for ${" + m.group(1) + "}");
            }
            m.appendReplacement(out, Matcher.quoteReplacement(value));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** The name the Redis certificate must carry: nginx checks names, so the loopback address is checked as localhost. */
    private static String tlsHostName(String host) {
        return host.equals("127.0.0.1") || host.equals("::1") || host.equals("[::1]") ? "localhost" : host;
    }

    /** The configuration kvr.gateway's configure() takes, as a Lua table. */
    String luaConfig() {
        StringBuilder engineList = new StringBuilder();
        engines.entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> engineList.append("{id = ").append(lua(e.getKey()))
                .append(", address = ").append(lua(e.getValue())).append("}, "));
        return "{model = " + lua(model) + ", key_prefix = " + lua(keyPrefix) + ", chunk_tokens = " + chunkTokens
                + ", max_view_age_ms = " + maxViewAge.toMillis() + ", hold_ms = " + hold.toMillis() + ", fail_timeout_ms = " + failTimeout.toMillis()
                + ", client_header = " + lua(clientHeader) + ", class_header = " + lua(classHeader)
                + ", redis = {host = " + lua(redisHost) + ", port = " + redisPort + ", timeout_ms = " + redisTimeout.toMillis()
                + (redisAccess.user() == null ? "" : ", user = " + lua(redisAccess.user()))
                + (redisAccess.passwordFile() == null ? "" : ", password_file = " + lua(redisAccess.passwordFile().toAbsolutePath().toString()))
                + (redisAccess.tls() ? ", tls = true, verify = " + redisAccess.verify() : "")
                + (redisAccess.tls() && redisAccess.checkHost() ? ", server_name = " + lua(tlsHostName(redisHost)) : "") + "}"
                + ", engines = {" + engineList + "}}";
    }

    /** A Lua string literal: quotes, backslashes and control characters escaped. */
    static String lua(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (byte c : s.getBytes(StandardCharsets.UTF_8)) {
            int u = c & 0xFF;
            if (u == '"' || u == '\\') {
                b.append('\\').append((char) u);
            } else if (u < 0x20 || u == 0x7F || u >= 0x80) {
                b.append('\\').append(String.format("%03d", u));
            } else {
                b.append((char) u);
            }
        }
        return b.append('"').toString();
    }

    static void writeLuaLibrary(Path dir) {
        try {
            for (String file : LUA_FILES) {
                Path target = dir.resolve(file);
                Files.createDirectories(target.getParent());
                Files.writeString(target, file.equals("kvr/contract.lua") ? ViewLayout.gatewayContractLua() : resource("lua/" + file));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String resource(String name) {
        try (InputStream in = NginxGateway.class.getResourceAsStream(RESOURCES + name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + RESOURCES + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
