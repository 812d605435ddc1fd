package dev.kvrouter.contract;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.SslVerifyMode;
import java.io.File;
import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How to authenticate to the view's Redis and whether to use TLS, the same for a standalone Redis
 * and every node of a cluster: an ACL user and password, and TLS with the certificates to trust.
 * Read from the client config's {@code redis.*} keys, never from the URL (a URL travels on command
 * lines and in messages). Nulls mean unset; serializable, as the Flink sink carries it.
 *
 * @param user               ACL user; unset with a password: Redis's {@code default} user
 * @param password           the user's password; unset: no AUTH
 * @param tls                TLS to every node (also on with a {@code rediss://} URL)
 * @param truststore         certificates to trust (PKCS12 or JKS); unset: the JVM's default trust store
 * @param truststorePassword the trust store's password
 * @param verify             {@code full} (the certificate and its host name, the default), {@code ca} (the
 *                           certificate only) or {@code none}
 */
public record RedisSecurity(String user, String password, boolean tls, String truststore, String truststorePassword,
                            String verify) implements Serializable {

    public static final String USER = "redis.user";
    public static final String PASSWORD = "redis.password";
    public static final String SSL = "redis.ssl";
    public static final String TRUSTSTORE_LOCATION = "redis.ssl.truststore.location";
    public static final String TRUSTSTORE_PASSWORD = "redis.ssl.truststore.password";
    public static final String VERIFY = "redis.ssl.verify";
    /**
     * The certificates to trust as a PEM file, for clients that do not read Java trust stores (the
     * nginx gateway); Java clients take the trust store and ignore it.
     */
    public static final String CA_LOCATION = "redis.ssl.ca.location";

    private static final List<String> KEYS = List.of(USER, PASSWORD, SSL, TRUSTSTORE_LOCATION, TRUSTSTORE_PASSWORD, VERIFY, CA_LOCATION);
    private static final RedisSecurity NONE = new RedisSecurity(null, null, false, null, null, "full");

    /** No credentials, no TLS. */
    public static RedisSecurity none() {
        return NONE;
    }

    /**
     * From the client config's {@code redis.*} keys.
     *
     * @throws IllegalArgumentException naming every problem (never a secret's value)
     */
    public static RedisSecurity fromConfig(Map<String, String> config) {
        List<String> problems = new ArrayList<>();
        for (String key : config.keySet()) {
            if (key.startsWith("redis.") && !KEYS.contains(key)) {
                problems.add(key + " is not a Redis setting; they are " + String.join(", ", KEYS));
            }
        }
        String tls = config.getOrDefault(SSL, "false").trim().toLowerCase(Locale.ROOT);
        if (!tls.equals("true") && !tls.equals("false")) {
            problems.add(SSL + " must be true or false");
        }
        String truststore = blankToNull(config.get(TRUSTSTORE_LOCATION));
        if (truststore != null && !Files.isReadable(Path.of(truststore))) {
            problems.add(TRUSTSTORE_LOCATION + ": cannot read " + truststore);
        }
        String ca = blankToNull(config.get(CA_LOCATION));
        if (ca != null && !Files.isReadable(Path.of(ca))) {
            problems.add(CA_LOCATION + ": cannot read " + ca);
        }
        String verify = config.getOrDefault(VERIFY, "full").trim().toLowerCase(Locale.ROOT);
        if (!List.of("full", "ca", "none").contains(verify)) {
            problems.add(VERIFY + " must be full, ca or none");
        }
        String user = blankToNull(config.get(USER));
        String password = config.get(PASSWORD);
        if (user != null && password == null) {
            problems.add(USER + " is set without " + PASSWORD + " (e.g. " + PASSWORD + "=${env:REDIS_PASSWORD})");
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("invalid Redis settings in the client config:\n  - " + String.join("\n  - ", problems));
        }
        return new RedisSecurity(user, password, tls.equals("true"), truststore, blankToNull(config.get(TRUSTSTORE_PASSWORD)), verify);
    }

    /**
     * Problems of a Redis URL as settings see it: credentials belong in the client config, not in the
     * URL (printed with its user info hidden). Empty when there are none.
     */
    public static List<String> urlProblems(String url) {
        List<String> problems = new ArrayList<>();
        String seeds = ViewConnection.isCluster(url) ? url.substring(ViewConnection.CLUSTER_SCHEME.length()) : url;
        if (seeds.contains("@")) {
            problems.add("the Redis URL " + redactUrl(url) + " carries credentials, which would end up on command lines and"
                    + " in messages: put them in the client config (" + USER + ", " + PASSWORD + ") instead");
        }
        return problems;
    }

    /** The URL with any user info replaced, for messages. */
    public static String redactUrl(String url) {
        // Every seed of a cluster URL may carry its own.
        return url == null ? null : url.replaceAll("(//|,)[^/@,]*@", "$1[redacted]@");
    }

    /** Applies the credentials and TLS to one node's URI. */
    RedisURI apply(RedisURI uri) {
        if (password != null) {
            if (user != null) {
                uri.setAuthentication(user, password);
            } else {
                uri.setAuthentication(password);
            }
        }
        if (tls) {
            uri.setSsl(true);
        }
        if (uri.isSsl()) {
            uri.setVerifyPeer(switch (verify == null ? "full" : verify) {
                case "none" -> SslVerifyMode.NONE;
                case "ca" -> SslVerifyMode.CA;
                default -> SslVerifyMode.FULL;
            });
        }
        return uri;
    }

    /** The TLS options (the trust store), or null for Lettuce's defaults. */
    SslOptions sslOptions() {
        if (truststore == null) {
            return null;
        }
        return SslOptions.builder().jdkSslProvider()
                .truststore(new File(truststore), truststorePassword == null ? null : truststorePassword)
                .build();
    }

    /**
     * A plain Lettuce client of a standalone Redis with these credentials and TLS, for what needs raw
     * commands rather than a {@link ViewConnection} (the benches' baselines).
     */
    public RedisClient standaloneClient(String url) {
        RedisClient client = RedisClient.create(apply(RedisURI.create(url)));
        SslOptions ssl = sslOptions();
        if (ssl != null) {
            client.setOptions(ClientOptions.builder().sslOptions(ssl).build());
        }
        return client;
    }

    /** Without the password. */
    @Override
    public String toString() {
        return "RedisSecurity[user=" + (user == null ? "default" : user) + ", password=" + (password == null ? "none" : "[redacted]")
                + ", tls=" + tls + ", truststore=" + (truststore == null ? "default" : truststore) + ", verify=" + verify + "]";
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.trim();
    }
}
