package dev.kvrouter.stack.junit;

import java.util.UUID;

/** Names no other test (or earlier run against a shared stack) uses: topics, subjects, Redis key prefixes. */
public final class UniqueNames {

    private UniqueNames() {}

    /** {@code base} followed by a random suffix, valid as a Kafka topic name. */
    public static String topic(String base) {
        return base + "-" + suffix();
    }

    /** A Redis key prefix ending in ':', e.g. {@code it-view-1a2b3c4d:}. */
    public static String redisPrefix(String base) {
        return base + "-" + suffix() + ":";
    }

    public static String suffix() {
        return UUID.randomUUID().toString().substring(0, 8);
    }
}
