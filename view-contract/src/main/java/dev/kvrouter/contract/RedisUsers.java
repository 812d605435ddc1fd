package dev.kvrouter.contract;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * kv-router's Redis users with least privilege, as shipped in {@code redis-users.conf} (this
 * package): the job (writes the view, loads the functions), a balancer (calls the functions, writes
 * only its reservations) and a reader ({@code kvr_peek} and reads). Layout 9 is what makes the
 * balancer's user possible: each function is given only the reservations key, so Redis's check of
 * the keys given to {@code FCALL} (every one as written) does not need the view to be writable.
 */
public final class RedisUsers {

    public static final String JOB = "kvr-job";
    public static final String BALANCER = "kvr-balancer";
    public static final String READER = "kvr-reader";
    public static final List<String> ALL = List.of(JOB, BALANCER, READER);

    private static final Pattern PASSWORD = Pattern.compile("\\{password:([a-z-]+)}");

    private RedisUsers() {}

    /** The shipped file as it is, comments and placeholders included. */
    public static String template() {
        return ViewLayout.resource("redis-users.conf");
    }

    /**
     * The {@code user} directives with the placeholders filled in, comments left out (the lines fit
     * redis.conf and an ACL file alike).
     *
     * @param prefix    the view's key prefix ({@code *} for any view)
     * @param passwords per user, the password as Redis takes it ({@code >secret} or {@code #<sha256 hex>})
     * @throws IllegalArgumentException when a user of the file has no password given
     */
    public static List<String> directives(String prefix, Map<String, String> passwords) {
        if (prefix.indexOf(' ') >= 0) {
            throw new IllegalArgumentException("the key prefix may not contain spaces (an ACL rule ends at one), was '" + prefix + "'");
        }
        List<String> lines = new ArrayList<>();
        for (String line : template().split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher m = PASSWORD.matcher(line);
            StringBuilder filled = new StringBuilder();
            while (m.find()) {
                String password = passwords.get(m.group(1));
                if (password == null || !(password.startsWith(">") || password.startsWith("#"))) {
                    throw new IllegalArgumentException("no password for Redis user " + m.group(1)
                            + " (give '>' and the password, or '#' and its SHA-256 in hex)");
                }
                m.appendReplacement(filled, Matcher.quoteReplacement(password));
            }
            m.appendTail(filled);
            lines.add(filled.toString().replace("{prefix}", prefix));
        }
        return lines;
    }
}
