package dev.kvrouter.jobs.ratios;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The prefix-class labels balancers send, kept apart in the ratios up to a cap: every label is a key
 * of two windows, a set of gauges and two Redis fields, so a balancer that sends a new label per
 * request (a bug, or a request id in the wrong header) must not grow them without end. Past the cap
 * a new label is counted under {@link #OTHER} until a known one has not been seen for the idle time
 * and gives its place. A label longer than {@link #MAX_LENGTH} or with control characters is
 * {@link #OTHER} too. Not thread-safe: one operator instance's.
 */
final class ClassLabels {

    /** The class of the labels past the cap, too long, or unprintable. */
    static final String OTHER = "other";
    static final int MAX_LENGTH = 128;

    private final int cap;
    private final long idleMs;
    /** Label → when last seen, least recently seen first. */
    private final LinkedHashMap<String, Long> lastSeen = new LinkedHashMap<>(16, 0.75f, true);
    private long overflowed;

    ClassLabels(int cap, long idleMs) {
        this.cap = cap;
        this.idleMs = idleMs;
    }

    /** The class a request labeled {@code label} is counted in, at {@code nowMs}. */
    String admit(String label, long nowMs) {
        if (label.length() > MAX_LENGTH || label.chars().anyMatch(Character::isISOControl)) {
            overflowed++;
            return OTHER;
        }
        if (lastSeen.containsKey(label)) {
            lastSeen.put(label, nowMs); // access order: it becomes the most recently seen
            return label;
        }
        if (lastSeen.size() >= cap) {
            Map.Entry<String, Long> eldest = lastSeen.entrySet().iterator().next();
            if (nowMs - eldest.getValue() <= idleMs) {
                overflowed++;
                return OTHER;
            }
            // State clearing: the least recently seen label has been idle past the idle time; its windows have closed.
            lastSeen.remove(eldest.getKey());
        }
        lastSeen.put(label, nowMs);
        return label;
    }

    /** Requests counted under {@link #OTHER} so far. */
    long overflowed() {
        return overflowed;
    }

    int size() {
        return lastSeen.size();
    }
}
