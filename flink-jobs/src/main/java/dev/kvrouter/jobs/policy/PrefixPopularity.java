package dev.kvrouter.jobs.policy;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;

/**
 * How often each prefix was asked for, in bounded memory: the Space-Saving heavy-hitters sketch
 * (Metwally et al.). At most {@code capacity} prefixes are tracked; a new one replaces the least
 * counted and inherits its count as error, so a tracked count never under-estimates. Prefixes
 * without a class label are then hot, warm or one-shot by thresholds on that count.
 */
public final class PrefixPopularity {

    public enum PrefixClass { HOT, WARM, ONE_SHOT }

    private record Counter(long prefix, long count, long error) {}

    private final int capacity;
    private final Map<Long, Counter> counters = new HashMap<>();
    private final TreeSet<Counter> byCount = new TreeSet<>((a, b) -> a.count != b.count
            ? Long.compare(a.count, b.count) : Long.compare(a.prefix, b.prefix));

    public PrefixPopularity(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1");
        }
        this.capacity = capacity;
    }

    public void add(long prefix) {
        Counter c = counters.get(prefix);
        if (c != null) {
            byCount.remove(c);
            put(new Counter(prefix, c.count + 1, c.error));
        } else if (counters.size() < capacity) {
            put(new Counter(prefix, 1, 0));
        } else {
            // State bound: the least counted prefix leaves; the newcomer inherits its count as error.
            Counter min = byCount.pollFirst();
            counters.remove(min.prefix);
            put(new Counter(prefix, min.count + 1, min.count));
        }
    }

    private void put(Counter c) {
        counters.put(c.prefix, c);
        byCount.add(c);
    }

    /** The estimated count (an upper bound; 0 for a prefix not tracked). */
    public long count(long prefix) {
        Counter c = counters.get(prefix);
        return c == null ? 0 : c.count;
    }

    /** The count that is certain (estimate minus error). */
    public long guaranteedCount(long prefix) {
        Counter c = counters.get(prefix);
        return c == null ? 0 : c.count - c.error;
    }

    public int size() {
        return counters.size();
    }

    /** Hot at {@code hotAt} requests or more, warm at {@code warmAt} or more, else one-shot. Uses the guaranteed count. */
    public PrefixClass classify(long prefix, long hotAt, long warmAt) {
        long n = guaranteedCount(prefix);
        return n >= hotAt ? PrefixClass.HOT : n >= warmAt ? PrefixClass.WARM : PrefixClass.ONE_SHOT;
    }
}
