package dev.kvrouter.bridge;

import java.util.List;

/** Ids the job accepts (its Validation): non-blank, at most 512 characters, none of , = | or control characters. */
final class Ids {

    static final int MAX_LENGTH = 512;

    private Ids() {}

    static List<String> problems(String name, String value) {
        if (value == null || value.isBlank()) {
            return List.of(name + " is missing");
        }
        if (value.length() > MAX_LENGTH) {
            return List.of(name + " is longer than " + MAX_LENGTH + " characters");
        }
        for (char c : value.toCharArray()) {
            if (c == ',' || c == '=' || c == '|' || Character.isISOControl(c)) {
                return List.of(name + " '" + value + "' contains a character the routing view cannot carry (, = | or a control character)");
            }
        }
        return List.of();
    }
}
