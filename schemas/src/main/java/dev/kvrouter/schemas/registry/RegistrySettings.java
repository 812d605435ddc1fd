package dev.kvrouter.schemas.registry;

import dev.kvrouter.common.config.TrustStores;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.SSLContext;

/**
 * How to reach a Confluent-compatible schema registry. Built from the Confluent client's own
 * property names, so a Kafka client configured for Confluent's serializers works unchanged.
 */
public record RegistrySettings(List<URI> urls, Optional<String> basicAuthUserInfo, Duration connectTimeout,
                               Duration requestTimeout, int cacheCapacity, Optional<Path> truststore,
                               Optional<String> truststorePassword) {

    /** Comma-separated base URLs, tried in order (Confluent: http://host:8081; Apicurio: .../apis/ccompat/v7). */
    public static final String URL = "schema.registry.url";
    /** {@code user:password} for HTTP basic auth; unset for none. */
    public static final String BASIC_AUTH_USER_INFO = "basic.auth.user.info";
    public static final String CONNECT_TIMEOUT_MS = "schema.registry.connect.timeout.ms";
    public static final String REQUEST_TIMEOUT_MS = "schema.registry.request.timeout.ms";
    /** Schemas and ids kept in memory per client; the least recently used leave first. */
    public static final String CACHE_CAPACITY = "schema.registry.cache.capacity";
    /** For an https URL: the certificates to trust (PKCS12 or JKS); unset: the JVM's default trust store. */
    public static final String TRUSTSTORE_LOCATION = "schema.registry.ssl.truststore.location";
    public static final String TRUSTSTORE_PASSWORD = "schema.registry.ssl.truststore.password";

    static final long DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
    static final long DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
    static final int DEFAULT_CACHE_CAPACITY = 1_000;

    public RegistrySettings {
        urls = List.copyOf(urls);
        truststore = truststore == null ? Optional.empty() : truststore;
        truststorePassword = truststorePassword == null ? Optional.empty() : truststorePassword;
        if (urls.isEmpty()) {
            throw new IllegalArgumentException(URL + " must name at least one registry URL");
        }
    }

    public static RegistrySettings of(String url) {
        return fromConfig(Map.of(URL, url));
    }

    /**
     * Reads the settings from client properties; every problem is reported in one exception.
     *
     * @throws IllegalArgumentException listing each invalid or missing property and what to set
     */
    public static RegistrySettings fromConfig(Map<String, ?> config) {
        List<String> problems = new ArrayList<>();
        RegistrySettings settings = parse(config, problems);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("invalid schema registry settings:\n  - " + String.join("\n  - ", problems));
        }
        return settings;
    }

    /**
     * Reads the settings, adding every problem to {@code problems} (for callers that report their own
     * settings' problems with these, all at once). Null when there was a problem.
     */
    public static RegistrySettings parse(Map<String, ?> config, List<String> problems) {
        int before = problems.size();
        List<URI> urls = new ArrayList<>();
        Object rawUrls = config.get(URL);
        if (rawUrls == null || rawUrls.toString().isBlank()) {
            problems.add(URL + " is not set: give the registry's base URL, e.g. http://127.0.0.1:8081");
        } else {
            for (String u : rawUrls.toString().split(",")) {
                String trimmed = u.trim().replaceAll("/+$", "");
                try {
                    URI uri = URI.create(trimmed);
                    if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null) {
                        problems.add(URL + ": '" + u.trim() + "' is not an http(s) URL with a host");
                    } else {
                        urls.add(uri);
                    }
                } catch (IllegalArgumentException e) {
                    problems.add(URL + ": '" + u.trim() + "' is not a URL (" + e.getMessage() + ")");
                }
            }
        }
        Optional<String> auth = Optional.ofNullable(config.get(BASIC_AUTH_USER_INFO)).map(Object::toString)
                .filter(s -> !s.isBlank());
        if (auth.isPresent() && !auth.get().contains(":")) {
            problems.add(BASIC_AUTH_USER_INFO + " must be user:password");
        }
        if (auth.isPresent() && urls.stream().anyMatch(u -> "http".equals(u.getScheme()))) {
            // Basic auth sends the password with every request: over plain http anyone on the path reads it.
            problems.add(BASIC_AUTH_USER_INFO + " is set but " + URL + " has an http URL: the password would cross the network in clear; "
                    + "use https (the stack's --secure registry is https)");
        }
        long connect = positiveLong(config, CONNECT_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS, problems);
        long request = positiveLong(config, REQUEST_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, problems);
        long capacity = positiveLong(config, CACHE_CAPACITY, DEFAULT_CACHE_CAPACITY, problems);
        Optional<Path> truststore = Optional.ofNullable(config.get(TRUSTSTORE_LOCATION)).map(Object::toString)
                .filter(s -> !s.isBlank()).map(Path::of);
        if (truststore.isPresent() && !Files.isReadable(truststore.get())) {
            problems.add(TRUSTSTORE_LOCATION + ": cannot read " + truststore.get());
        }
        Optional<String> truststorePassword = Optional.ofNullable(config.get(TRUSTSTORE_PASSWORD)).map(Object::toString);
        if (problems.size() > before) {
            return null;
        }
        return new RegistrySettings(urls, auth, Duration.ofMillis(connect), Duration.ofMillis(request), (int) capacity,
                truststore, truststorePassword);
    }

    /** The TLS context for https URLs: the trust store's certificates, or the JVM's defaults without one. */
    public SSLContext sslContext() {
        if (truststore.isEmpty()) {
            try {
                return SSLContext.getDefault();
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("the JVM has no default TLS context", e);
            }
        }
        try {
            return TrustStores.sslContext(truststore.get(), truststorePassword.orElse(null));
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException(TRUSTSTORE_LOCATION + ": cannot load " + truststore.get() + " as a trust store ("
                    + e.getMessage() + "); check " + TRUSTSTORE_PASSWORD, e);
        }
    }

    /** Without the secrets: the user info and the trust store's password print as [redacted]. */
    @Override
    public String toString() {
        return "RegistrySettings[urls=" + urls + ", basicAuthUserInfo=" + basicAuthUserInfo.map(u -> "[redacted]").orElse("none")
                + ", connectTimeout=" + connectTimeout + ", requestTimeout=" + requestTimeout + ", cacheCapacity=" + cacheCapacity
                + ", truststore=" + truststore.map(Path::toString).orElse("default") + "]";
    }

    private static long positiveLong(Map<String, ?> config, String key, long defaultValue, List<String> problems) {
        Object raw = config.get(key);
        if (raw == null) {
            return defaultValue;
        }
        try {
            long v = Long.parseLong(raw.toString().trim());
            if (v <= 0 || v > Integer.MAX_VALUE) {
                problems.add(key + " must be a positive whole number, was " + raw);
            }
            return v;
        } catch (NumberFormatException e) {
            problems.add(key + " must be a positive whole number, was '" + raw + "'");
            return defaultValue;
        }
    }
}
