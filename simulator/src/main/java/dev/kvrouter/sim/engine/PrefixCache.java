package dev.kvrouter.sim.engine;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An engine's KV blocks as vLLM's prefix caching keeps them: cached blocks keyed by chained block
 * hash, pinned (reference counted) while a running request uses them, and otherwise in an LRU
 * queue of evictable blocks. A newly needed block takes a never-used slot, else evicts the least
 * recently freed block. Blocks of a running request that are not (yet) in the cache — still being
 * prefilled, or the partial last block — are private: they count against capacity only.
 */
public final class PrefixCache {

    private static final class Block {
        final long hash;
        int refs;

        Block(long hash) {
            this.hash = hash;
        }
    }

    private final int capacity;
    private final Map<Long, Block> cached = new HashMap<>();
    /** Evictable blocks (refs == 0), least recently freed first. */
    private final LinkedHashMap<Long, Block> evictable = new LinkedHashMap<>();
    private int privateBlocks;

    public PrefixCache(int capacityBlocks) {
        if (capacityBlocks < 1) {
            throw new IllegalArgumentException("capacity must be at least one block, was " + capacityBlocks);
        }
        this.capacity = capacityBlocks;
    }

    public int capacity() {
        return capacity;
    }

    /** Blocks holding KV: cached (pinned or evictable) and private. */
    public int used() {
        return cached.size() + privateBlocks;
    }

    /** Blocks in use by running requests: what vLLM reports as KV usage. */
    public int pinned() {
        return cached.size() - evictable.size() + privateBlocks;
    }

    public int cachedBlocks() {
        return cached.size();
    }

    public boolean contains(long hash) {
        return cached.containsKey(hash);
    }

    /** Leading blocks of the chain found in the cache: a block counts only when all its ancestors do. */
    public int prefixMatch(long[] chain) {
        int n = 0;
        while (n < chain.length && cached.containsKey(chain[n])) {
            n++;
        }
        return n;
    }

    /** Could {@code fresh} new private blocks be had, by eviction if need be, after pinning {@code chain[0, matched)}? */
    public boolean canAllocate(long[] chain, int matched, int fresh) {
        int evictableAfterPin = evictable.size();
        for (int i = 0; i < matched; i++) {
            if (cached.get(chain[i]).refs == 0) {
                evictableAfterPin--;
            }
        }
        return capacity - used() + evictableAfterPin >= fresh;
    }

    /**
     * Pins the matched prefix and allocates {@code fresh} private blocks, evicting LRU blocks as
     * needed; returns the evicted hashes in eviction order. Call {@link #canAllocate} first.
     */
    public List<Long> admit(long[] chain, int matched, int fresh) {
        for (int i = 0; i < matched; i++) {
            Block b = cached.get(chain[i]);
            if (b.refs++ == 0) {
                evictable.remove(b.hash);
            }
        }
        List<Long> evicted = new ArrayList<>();
        while (capacity - used() < fresh) {
            Iterator<Block> lru = evictable.values().iterator();
            if (!lru.hasNext()) {
                throw new IllegalStateException("no block to evict: check canAllocate first");
            }
            Block victim = lru.next();
            lru.remove();
            cached.remove(victim.hash);
            evicted.add(victim.hash);
        }
        privateBlocks += fresh;
        return evicted;
    }

    /**
     * The prefill computed {@code chain[from, to)}: each private block becomes a cached, pinned one,
     * unless another request cached the same block meanwhile (then that one is pinned and the
     * private copy freed, as vLLM does with a duplicate). Returns, per block, whether it was new.
     */
    public boolean[] store(long[] chain, int from, int to) {
        boolean[] isNew = new boolean[to - from];
        for (int i = from; i < to; i++) {
            privateBlocks--;
            Block existing = cached.get(chain[i]);
            if (existing == null) {
                Block b = new Block(chain[i]);
                b.refs = 1;
                cached.put(b.hash, b);
                isNew[i - from] = true;
            } else if (existing.refs++ == 0) {
                evictable.remove(existing.hash);
            }
        }
        return isNew;
    }

    /**
     * A request finished: unpins its cached blocks {@code chain[0, cachedUpTo)} and frees its
     * {@code privateCount} private blocks. Freed in reverse order, as vLLM does, so a prompt's tail
     * is evicted before its head and the cache keeps whole prefixes.
     */
    public void release(long[] chain, int cachedUpTo, int privateCount) {
        privateBlocks -= privateCount;
        for (int i = cachedUpTo - 1; i >= 0; i--) {
            Block b = cached.get(chain[i]);
            if (b == null) {
                throw new IllegalStateException("releasing a block that is not cached");
            }
            if (--b.refs == 0) {
                evictable.put(b.hash, b);
            }
        }
    }

    /** Drops everything (restart): running requests are gone with it. */
    public void clear() {
        cached.clear();
        evictable.clear();
        privateBlocks = 0;
    }

    /** Evictable hashes, least recently freed first (for tests). */
    List<Long> evictionOrder() {
        return new ArrayList<>(evictable.keySet());
    }
}
