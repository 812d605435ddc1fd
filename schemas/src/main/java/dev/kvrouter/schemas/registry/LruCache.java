package dev.kvrouter.schemas.registry;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/** A small bounded map, least recently used out first. Lookups are rare enough for one lock. */
final class LruCache<K, V> {

    private final Map<K, V> map;

    LruCache(int capacity) {
        this.map = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
                return size() > capacity;
            }
        };
    }

    synchronized V get(K key) {
        return map.get(key);
    }

    synchronized void put(K key, V value) {
        map.put(key, value);
    }

    /** The cached value, or one computed outside the lock (a registry call must not block other lookups). */
    V computeIfAbsent(K key, Function<K, V> loader) {
        V cached = get(key);
        if (cached != null) {
            return cached;
        }
        V loaded = loader.apply(key);
        put(key, loaded);
        return loaded;
    }

    synchronized int size() {
        return map.size();
    }
}
