package dev.kvrouter.bridge;

import java.util.List;

/** Every problem of a bridge configuration (settings or engines file), reported at once. */
public final class InvalidBridgeConfigException extends IllegalArgumentException {

    private final List<String> problems;

    public InvalidBridgeConfigException(List<String> problems) {
        super("invalid bridge configuration:\n  - " + String.join("\n  - ", problems));
        this.problems = List.copyOf(problems);
    }

    public List<String> problems() {
        return problems;
    }
}
