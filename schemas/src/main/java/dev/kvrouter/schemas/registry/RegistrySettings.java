package dev.kvrouter.schemas.registry;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How to reach a Confluent-compatible schema registry. Built from the Confluent client's own
 * property names, so a Kafka client configured for Confluent's serializers works unchanged.
 */
public record RegistrySettings(List<URI> urls, Optional<String> basicAuthUserInfo, Duration connectTimeout,
                               Duration requestTimeout, int cacheCapacity) {

    /** Comma-separated base URLs, tried in order (Confluent: http://host:8081; Apicurio: .../apis/ccompat/v7). */
    public static final String URL = "schema.registry.url";
    /** {@code user:password} for HTTP basic auth; unset for none. */
    public static final String BASIC_AUTH_USER_INFO = "basic.auth.user.info";
    public static final String CONNECT_TIMEOUT_MS = "schema.registry.connect.timeout.ms";
    public static final String REQUEST_TIMEOUT_MS = "schema.registry.request.timeout.ms";
    /** Schemas and ids kept in memory per client; the least recently used leave first. */
    public static final String CACHE_CAPACITY = "schema.registry.cache.capacity";

    static final long DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
    static final long DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
    static final int DEFAULT_CACHE_CAPACITY = 1_000;

    public RegistrySettings {
        urls = List.copyOf(urls);
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
        long connect = positiveLong(config, CONNECT_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS, problems);
        long request = positiveLong(config, REQUEST_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, problems);
        long capacity = positiveLong(config, CACHE_CAPACITY, DEFAULT_CACHE_CAPACITY, problems);
        if (problems.size() > before) {
            return null;
        }
        return new RegistrySettings(urls, auth, Duration.ofMillis(connect), Duration.ofMillis(request), (int) capacity);
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
