package dev.kvrouter.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The routing view's keys in Redis (documented in redis-sink/README.md). Every key starts with a
 * configurable prefix, so several views (or tests) share one Redis without seeing each other.
 *
 * <ul>
 *   <li>{@code <prefix>meta}: hash; {@code updated_ms} (the pipeline's last heartbeat: the view's
 *       freshness), {@code watermark_ms}, {@code chunk_tokens}, {@code tag_depth},
 *       {@code busy_factor}, {@code confidence_floor}, {@code layout}. Short TTL, refreshed.</li>
 *   <li>{@code <prefix>engines}: hash, engine id → {@link EngineEntry} text. Short TTL, refreshed.</li>
 *   <li>{@code <prefix>g:{<tag>}}: hash, one per chain group: 16-hex canonical block hash →
 *       the engines holding that block, {@code engine=stored_ms.epoch} (base 36), comma-separated.
 *       The tag is the block's hash at depth min(position, tag depth), so a chain's blocks past the
 *       tag depth share one key and one Redis Cluster slot.</li>
 * </ul>
 */
public final class ViewLayout {

    /** Bumped on any incompatible change of keys or values; the Lua library checks it. */
    public static final int LAYOUT_VERSION = 6;
    public static final String FUNCTION_LIBRARY = "kvrouter";
    public static final String PICK_FUNCTION = "kvr_pick";

    private final String prefix;

    public ViewLayout(String prefix) {
        this.prefix = prefix;
    }

    public String prefix() {
        return prefix;
    }

    public String metaKey() {
        return prefix + "meta";
    }

    public String enginesKey() {
        return prefix + "engines";
    }

    /** Requests in flight per client: field client id, value {@code engine=count,…}. */
    public String clientsKey() {
        return prefix + "clients";
    }

    /** Affinity per prefix class: field class, value {@code on} or {@code off} (absent: on). */
    public String classesKey() {
        return prefix + "classes";
    }

    /** Latest per-class ratios: field {@code <class>/<tumbling|sliding>}. */
    public String ratiosKey() {
        return prefix + "ratios";
    }

    public String groupKey(long tagHash) {
        return prefix + "g:{" + hex(tagHash) + "}";
    }

    /** The group tag of the block at 1-based {@code position} in a chain, given the chain's hashes. */
    public static long tag(long[] chain, int position, int tagDepth) {
        return chain[Math.min(position, tagDepth) - 1];
    }

    public static String hex(long hash) {
        String h = Long.toHexString(hash);
        return h.length() == 16 ? h : "0".repeat(16 - h.length()) + h;
    }

    public static long parseHex(String hex) {
        return Long.parseUnsignedLong(hex, 16);
    }

    /** One holder in a block field: {@code engine=stored_ms.epoch}, both numbers in base 36. */
    public static String holder(String engineId, long storedAtMs, long epoch) {
        return engineId + "=" + Long.toString(storedAtMs, 36) + "." + Long.toString(epoch, 36);
    }

    /** The Lua function library, as loaded into Redis. */
    public static String functionLibrary() {
        try (InputStream in = ViewLayout.class.getResourceAsStream("kvrouter.lua")) {
            if (in == null) {
                throw new IllegalStateException("kvrouter.lua is missing from the kvr-redis-sink jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
