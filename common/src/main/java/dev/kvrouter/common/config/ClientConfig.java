package dev.kvrouter.common.config;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How every kv-router component connects to secured services: one client properties file, the same
 * for the job, the bridge, the simulator, {@code topics apply}, the benches and the demo
 * ({@code --client-config FILE}, default {@code $KVR_CLIENT_CONFIG}). Three kinds of keys:
 * <ul>
 *   <li>Kafka client settings under Kafka's own names ({@code security.protocol},
 *       {@code sasl.mechanism}, {@code sasl.jaas.config}, {@code ssl.truststore.location}, ...),
 *       given to every producer, consumer and admin client;</li>
 *   <li>the registry's under the Confluent client's names ({@code basic.auth.user.info},
 *       {@code schema.registry.ssl.truststore.location}, ...);</li>
 *   <li>Redis's under {@code redis.} ({@code redis.user}, {@code redis.password},
 *       {@code redis.ssl.truststore.location}, ...).</li>
 * </ul>
 * A value may take a secret from elsewhere, whole or in part: {@code ${env:NAME}} (an environment
 * variable) or {@code ${file:PATH}} (a file's content, trailing newlines dropped, as secrets mounted
 * by Kubernetes or systemd credentials are), so no secret has to be on a command line. Printed, the
 * values of secret keys read {@value #REDACTED}.
 */
public final class ClientConfig {

    /** The environment variable naming the file, which './kvr stack env' exports for a secure stack. */
    public static final String VARIABLE = "KVR_CLIENT_CONFIG";
    /** What a secret value prints as. */
    public static final String REDACTED = "[redacted]";
    /** Prefix of the Redis keys. */
    public static final String REDIS_PREFIX = "redis.";

    private static final Pattern REFERENCE = Pattern.compile("\\$\\{([a-z]+):([^}]*)}");
    private static final ClientConfig NONE = new ClientConfig("no client config", Map.of());

    private final String source;
    private final Map<String, String> values;

    private ClientConfig(String source, Map<String, String> values) {
        this.source = source;
        this.values = Collections.unmodifiableMap(new TreeMap<>(values));
    }

    /** No settings: plaintext, unauthenticated connections. */
    public static ClientConfig none() {
        return NONE;
    }

    /**
     * Reads the file and resolves its references.
     *
     * @throws IllegalArgumentException naming the file and every problem in it (never a value)
     */
    public static ClientConfig load(Path file) {
        return load(file, System::getenv);
    }

    static ClientConfig load(Path file, Function<String, String> environment) {
        Properties raw = new Properties();
        try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            raw.load(in);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the client config " + file + " (" + e.getMessage()
                    + "): give a readable properties file with --client-config or $" + VARIABLE);
        }
        Map<String, String> given = new TreeMap<>();
        raw.stringPropertyNames().forEach(k -> given.put(k, raw.getProperty(k)));
        return resolve(file.toString(), given, environment);
    }

    /** Settings given in code (tests, the local stack); references resolved as from a file. */
    public static ClientConfig of(Map<String, String> given) {
        return resolve("client config", given, System::getenv);
    }

    private static ClientConfig resolve(String source, Map<String, String> given, Function<String, String> environment) {
        List<String> problems = new ArrayList<>();
        Map<String, String> resolved = new TreeMap<>();
        given.forEach((key, value) -> resolved.put(key, resolve(key, value, environment, problems)));
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("the client config " + source + " has " + problems.size()
                    + (problems.size() == 1 ? " problem" : " problems") + ":\n  - " + String.join("\n  - ", problems));
        }
        return new ClientConfig(source, resolved);
    }

    private static String resolve(String key, String value, Function<String, String> environment, List<String> problems) {
        Matcher m = REFERENCE.matcher(value);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String kind = m.group(1);
            String name = m.group(2);
            String replacement = "";
            switch (kind) {
                case "env" -> {
                    String v = environment.apply(name);
                    if (v == null) {
                        problems.add(key + ": the environment variable " + name + " is not set");
                    } else {
                        replacement = v;
                    }
                }
                case "file" -> {
                    try {
                        replacement = Files.readString(Path.of(name), StandardCharsets.UTF_8).replaceAll("[\r\n]+$", "");
                    } catch (IOException | RuntimeException e) {
                        problems.add(key + ": cannot read the file " + name + " (" + e.getClass().getSimpleName() + ")");
                    }
                }
                default -> problems.add(key + ": unknown reference ${" + kind + ":...}; use ${env:NAME} or ${file:PATH}");
            }
            m.appendReplacement(out, Matcher.quoteReplacement(replacement));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** True when no setting is given. */
    public boolean isEmpty() {
        return values.isEmpty();
    }

    /** Where the settings came from (a file's path), for messages. */
    public String source() {
        return source;
    }

    /** Every setting, resolved. */
    public Map<String, String> all() {
        return values;
    }

    /** The Kafka client settings: every key that is neither Redis's nor the registry's. */
    public Map<String, Object> kafka() {
        Map<String, Object> kafka = new TreeMap<>();
        values.forEach((k, v) -> {
            if (!k.startsWith(REDIS_PREFIX) && !isRegistryKey(k)) {
                kafka.put(k, v);
            }
        });
        return kafka;
    }

    /**
     * The settings of a Kafka client whose serializer talks to the registry (the Confluent way: the
     * serializer takes its settings from the client's): Kafka's and the registry's.
     */
    public Map<String, Object> kafkaWithRegistry() {
        Map<String, Object> settings = kafka();
        settings.putAll(registry());
        return settings;
    }

    /** The registry client's settings (Confluent's names): {@code schema.registry.*} and {@code basic.auth.*}. */
    public Map<String, String> registry() {
        Map<String, String> registry = new TreeMap<>();
        values.forEach((k, v) -> {
            if (isRegistryKey(k)) {
                registry.put(k, v);
            }
        });
        return registry;
    }

    /** The Redis settings, {@code redis.*}. */
    public Map<String, String> redis() {
        Map<String, String> redis = new TreeMap<>();
        values.forEach((k, v) -> {
            if (k.startsWith(REDIS_PREFIX)) {
                redis.put(k, v);
            }
        });
        return redis;
    }

    static boolean isRegistryKey(String key) {
        return key.startsWith("schema.registry.") || key.startsWith("basic.auth.");
    }

    /** Whether a key holds a secret (passwords, JAAS configs with a password, registry user info, keys, tokens). */
    public static boolean isSecret(String key) {
        String k = key.toLowerCase(Locale.ROOT);
        return k.contains("password") || k.contains("secret") || k.contains("jaas") || k.contains("user.info")
                || k.contains("token") || k.endsWith(".key");
    }

    /** The settings as {@code {key=value, ...}} with every secret's value {@value #REDACTED}. */
    public static String redact(Map<String, ?> settings) {
        StringBuilder s = new StringBuilder("{");
        new TreeMap<>(settings).forEach((k, v) -> s.append(s.length() > 1 ? ", " : "").append(k).append('=')
                .append(isSecret(k) ? REDACTED : v));
        return s.append('}').toString();
    }

    @Override
    public String toString() {
        return source + " " + redact(values);
    }
}
