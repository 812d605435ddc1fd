package dev.kvrouter.common;

import java.util.Optional;

/**
 * The ids the routing view carries (engines, models, clients): what the job accepts and the bridge
 * checks before sending. The view's values separate their fields with {@code , = |}
 * (redis-sink/README.md), so an id holds none of them, nor a control character.
 */
public final class ViewIds {

    /** The job's {@code limits.max-string-length} default: the longest id. */
    public static final int DEFAULT_MAX_LENGTH = 512;

    private ViewIds() {}

    /** Why {@code value}, the id called {@code name}, cannot be carried; empty when it can. */
    public static Optional<String> problem(String name, String value, int maxLength) {
        if (value == null || value.isBlank()) {
            return Optional.of(name + " is missing");
        }
        if (value.length() > maxLength) {
            return Optional.of(name + " is longer than " + maxLength + " characters");
        }
        for (char c : value.toCharArray()) {
            if (c == ',' || c == '=' || c == '|' || Character.isISOControl(c)) {
                return Optional.of(name + " '" + value + "' contains '" + (Character.isISOControl(c) ? "\\u" + (int) c : c)
                        + "': ids may not contain , = | or control characters");
            }
        }
        return Optional.empty();
    }
}
