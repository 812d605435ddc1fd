package dev.kvrouter.stack;

import dev.kvrouter.common.cli.ServiceOption;
import dev.kvrouter.common.config.ClientConfig;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Where the services of a stack answer, and for a secure stack the client config to reach them with
 * ("" for none). The same names are used as environment variables.
 */
public record StackAddresses(String kafkaBootstrap, String schemaRegistryUrl, String redisUrl, String clientConfig) {

    public static final String KAFKA_BOOTSTRAP = ServiceOption.KAFKA_BOOTSTRAP;
    public static final String SCHEMA_REGISTRY_URL = ServiceOption.SCHEMA_REGISTRY_URL;
    public static final String REDIS_URL = ServiceOption.REDIS_URL;
    public static final String CLIENT_CONFIG = ClientConfig.VARIABLE;

    public StackAddresses {
        clientConfig = clientConfig == null ? "" : clientConfig;
    }

    /** A plaintext stack's addresses. */
    public StackAddresses(String kafkaBootstrap, String schemaRegistryUrl, String redisUrl) {
        this(kafkaBootstrap, schemaRegistryUrl, redisUrl, "");
    }

    /** The settings to reach the stack with: none for a plaintext stack. */
    public ClientConfig client() {
        return clientConfig.isEmpty() ? ClientConfig.none() : ClientConfig.load(java.nio.file.Path.of(clientConfig));
    }

    /** The lines {@code KEY=value}, in a fixed order, ready to be sourced by a shell. */
    public Map<String, String> asEnv() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put(KAFKA_BOOTSTRAP, kafkaBootstrap);
        env.put(SCHEMA_REGISTRY_URL, schemaRegistryUrl);
        env.put(REDIS_URL, redisUrl);
        if (!clientConfig.isEmpty()) {
            env.put(CLIENT_CONFIG, clientConfig);
        }
        return env;
    }

    public String toEnvLines() {
        StringBuilder lines = new StringBuilder();
        asEnv().forEach((k, v) -> lines.append(k).append('=').append(v).append('\n'));
        return lines.toString();
    }

    /** The stack this process's environment names, for a command that measures one: an error saying how to start one when none is set. */
    public static StackAddresses toMeasure() {
        return fromEnv(System.getenv()).orElseThrow(() -> new IllegalStateException("no stack to measure: run './kvr stack up' first (or set "
                + KAFKA_BOOTSTRAP + ", " + SCHEMA_REGISTRY_URL + " and " + REDIS_URL + ")"));
    }

    /**
     * Reads the three addresses from an environment. Empty when none is set; an error naming the
     * missing ones when only some are, since half a stack is a configuration mistake.
     */
    public static Optional<StackAddresses> fromEnv(Map<String, String> env) {
        List<String> missing = new ArrayList<>();
        int present = 0;
        for (String name : List.of(KAFKA_BOOTSTRAP, SCHEMA_REGISTRY_URL, REDIS_URL)) {
            String value = env.get(name);
            if (value == null || value.isBlank()) {
                missing.add(name);
            } else {
                present++;
            }
        }
        if (present == 0) {
            return Optional.empty();
        }
        if (!missing.isEmpty()) {
            throw new IllegalStateException("Only part of a stack is given in the environment: set "
                    + String.join(", ", missing) + " as well (or unset all three to start a private stack)");
        }
        return Optional.of(new StackAddresses(env.get(KAFKA_BOOTSTRAP), env.get(SCHEMA_REGISTRY_URL), env.get(REDIS_URL),
                env.get(CLIENT_CONFIG)));
    }

    /** Host and port of {@link #redisUrl()} ({@code redis://host:port}). */
    public String redisHostPort() {
        String rest = redisUrl.replaceFirst("^rediss?://", "");
        int slash = rest.indexOf('/');
        return slash < 0 ? rest : rest.substring(0, slash);
    }
}
