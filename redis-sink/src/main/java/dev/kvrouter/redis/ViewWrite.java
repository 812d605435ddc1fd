package dev.kvrouter.redis;

import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.contract.ViewLayout;
import java.util.Objects;

/**
 * One write to the routing view: set or delete one field of one hash. The sink keeps only the
 * newest write per (key, field) between flushes; a null value deletes the field.
 *
 * <p>A POJO (public fields, no-arg constructor) so Flink serializes it without Kryo; kv-router's job
 * gives its streams a faster serializer of its own ({@code ViewWriteType}).
 */
public class ViewWrite {

    /** A block field in a group hash, an engine in the engine table, a field of the meta key, or a class's latest ratios. */
    public enum Kind { BLOCK, ENGINE, META, RATIOS, CLASS_POLICY, CLIENTS }

    public Kind kind;
    /** BLOCK: the group tag hash; ENGINE: unused (0). */
    public long tag;
    /** BLOCK: 16-hex canonical hash; ENGINE: engine id. */
    public String field;
    /** The new value, or null to delete the field. */
    public String value;
    /** BLOCK: when the newest holder in the value expires (epoch ms): the key's TTL is at least this. */
    public long expireAtMs;
    /** Event time the write reflects (epoch ms), for the view's watermark and freshness metrics. */
    public long eventTimeMs;

    public ViewWrite() {}

    public static ViewWrite block(long tag, long blockHash, String value, long expireAtMs, long eventTimeMs) {
        ViewWrite w = new ViewWrite();
        w.kind = Kind.BLOCK;
        w.tag = tag;
        w.field = ViewLayout.hex(blockHash);
        w.value = value;
        w.expireAtMs = expireAtMs;
        w.eventTimeMs = eventTimeMs;
        return w;
    }

    public static ViewWrite engine(String engineId, EngineEntry entry, long eventTimeMs) {
        ViewWrite w = new ViewWrite();
        w.kind = Kind.ENGINE;
        w.field = engineId;
        w.value = entry == null ? null : entry.encode();
        w.eventTimeMs = eventTimeMs;
        return w;
    }

    /** A fleet figure in the meta key (fleet mean load, load Gini, hot engines). */
    public static ViewWrite meta(String field, String value, long eventTimeMs) {
        ViewWrite w = new ViewWrite();
        w.kind = Kind.META;
        w.field = field;
        w.value = value;
        w.eventTimeMs = eventTimeMs;
        return w;
    }

    /** A client's requests in flight per engine, {@code engine=count,…}; null when it has none. */
    public static ViewWrite clientInflight(String clientId, String value, long eventTimeMs) {
        ViewWrite w = meta(clientId, value, eventTimeMs);
        w.kind = Kind.CLIENTS;
        return w;
    }

    /** Affinity {@code on} or {@code off} for a prefix class (the job writes none since 2026-12; older jobs' writes still apply). */
    public static ViewWrite classPolicy(String prefixClass, String value, long eventTimeMs) {
        ViewWrite w = meta(prefixClass, value, eventTimeMs);
        w.kind = Kind.CLASS_POLICY;
        return w;
    }

    /** The latest ratios of one prefix class and window kind. */
    public static ViewWrite ratios(String field, String value, long eventTimeMs) {
        ViewWrite w = meta(field, value, eventTimeMs);
        w.kind = Kind.RATIOS;
        return w;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ViewWrite w && kind == w.kind && tag == w.tag && expireAtMs == w.expireAtMs
                && eventTimeMs == w.eventTimeMs && Objects.equals(field, w.field) && Objects.equals(value, w.value);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, tag, field, value, expireAtMs, eventTimeMs);
    }

    @Override
    public String toString() {
        return kind + (kind == Kind.BLOCK ? " {" + ViewLayout.hex(tag) + "} " : " ") + field + " = " + value;
    }
}
