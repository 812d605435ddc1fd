package dev.kvrouter.sim.policy;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A router's own record of the prefixes it sent to each engine (SGLang's approximate radix tree,
 * AIBrix's prefix hash table): block hash → the engines it was routed to, as a bit set (at most
 * 64 engines). It never hears of evictions, only of its own routing, and it forgets least recently
 * matched blocks beyond {@code maxBlocks}, so it is as stale as the real ones.
 */
final class RoutedPrefixTable {

    private final LinkedHashMap<Long, Long> blocks;

    RoutedPrefixTable(int maxBlocks) {
        this.blocks = new LinkedHashMap<>(1024, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, Long> eldest) {
                return size() > maxBlocks;
            }
        };
    }

    /** Per engine, how many leading blocks of the chain this router sent there (a consecutive prefix). */
    int[] match(long[] chain, int engines) {
        if (engines > 64) {
            throw new IllegalArgumentException("the table tracks at most 64 engines, not " + engines);
        }
        int[] depth = new int[engines];
        long live = engines == 64 ? -1L : (1L << engines) - 1;
        for (int k = 0; k < chain.length && live != 0; k++) {
            Long mask = blocks.get(chain[k]);
            long now = live & (mask == null ? 0 : mask);
            long dropped = live & ~now;
            for (int e = 0; e < engines; e++) {
                if ((dropped & (1L << e)) != 0) {
                    depth[e] = k;
                }
            }
            live = now;
        }
        for (int e = 0; e < engines; e++) {
            if ((live & (1L << e)) != 0) {
                depth[e] = chain.length;
            }
        }
        return depth;
    }

    void insert(long[] chain, int engine) {
        for (long h : chain) {
            blocks.merge(h, 1L << engine, (a, b) -> a | b);
        }
    }

    /** Blocks remembered. */
    int size() {
        return blocks.size();
    }
}
