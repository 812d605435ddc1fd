package dev.kvrouter.stack;

/** The processes a local stack runs. */
public enum Service {
    KAFKA("kafka"),
    REGISTRY("registry"),
    REDIS("redis");

    private final String key;

    Service(String key) {
        this.key = key;
    }

    /** Name used in the state file, the log file and messages. */
    public String key() {
        return key;
    }
}
