package dev.kvrouter.common.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A command-line option naming a service the command talks to, which defaults to the environment
 * variable './kvr' sets from a running stack. Each command mixes in the ones it needs
 * ({@code @Mixin KafkaOption kafka;}), so the flag, its environment variable and the error that
 * names both are written once.
 */
public abstract class ServiceOption {

    /** The environment './kvr stack env' exports, and './kvr' passes to every command. */
    public static final String KAFKA_BOOTSTRAP = "KAFKA_BOOTSTRAP";
    public static final String SCHEMA_REGISTRY_URL = "SCHEMA_REGISTRY_URL";
    public static final String REDIS_URL = "REDIS_URL";

    static Map<String, String> environment = System.getenv();

    /** The flag, e.g. {@code --bootstrap HOST:PORT}, as errors name it. */
    private final String flag;
    /** The environment variable it defaults to. */
    private final String variable;

    protected ServiceOption(String flag, String variable) {
        this.flag = flag;
        this.variable = variable;
    }

    /** The flag's value as given; null when not given. */
    protected abstract String given();

    /** The flag's value, else the environment's; empty when neither is set. */
    public Optional<String> find() {
        String v = given() != null ? given() : environment.get(variable);
        return v == null || v.isBlank() ? Optional.empty() : Optional.of(v);
    }

    /** The value, or an error that says how to give it. */
    public String value() {
        requireAll(this);
        return find().orElseThrow();
    }

    /** Fails naming every one of these that is not set, not only the first. */
    public static void requireAll(ServiceOption... options) {
        List<String> missing = new ArrayList<>();
        for (ServiceOption o : options) {
            if (o.find().isEmpty()) {
                missing.add(o.flag + " (or $" + o.variable + ")");
            }
        }
        if (!missing.isEmpty()) {
            throw new IllegalArgumentException("this needs " + String.join(", ", missing)
                    + ": pass it, or start a stack with './kvr stack up' and run through './kvr', which sets the variables");
        }
    }
}
