package dev.kvrouter.contract;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The routing view's keys in Redis (documented in redis-sink/README.md). Every key starts with a
 * configurable prefix, so several views (or tests) share one Redis without seeing each other.
 *
 * <p>The keys a placement reads and writes besides the prompt's groups (meta, engine table, class
 * policy, reservations) share the hash tag {@code {head}}: on Redis Cluster they sit in one slot, so
 * the placement and its reservation are one atomic call on one primary.
 *
 * <ul>
 *   <li>{@code <prefix>{head}:meta}: hash; {@code updated_ms} (when an engine's report last came through the
 *       pipeline: the view's freshness), {@code watermark_ms}, {@code chunk_tokens}, {@code tag_depth},
 *       {@code busy_factor}, {@code confidence_floor}, {@code layout}. Short TTL, refreshed.</li>
 *   <li>{@code <prefix>{head}:engines}: hash, engine id → {@link EngineEntry} text. Short TTL, refreshed.</li>
 *   <li>{@code <prefix>g:{<tag>}}: hash, one per chain group: 16-hex canonical block hash →
 *       the engines holding that block, {@code engine=stored_ms.epoch} (base 36), comma-separated.
 *       The tag is the block's hash at depth min(position, tag depth), so a chain's blocks past the
 *       tag depth share one key and one Redis Cluster slot.</li>
 *   <li>{@code <prefix>{head}:res} and the keys under it: the balancers' reservations (kvrouter.lua).</li>
 * </ul>
 */
public final class ViewLayout {

    // The names and defaults below are the contract's (kvr-view.yaml, generated into ViewContract), under the
    // names the modules have always used.

    /** Bumped on any incompatible change of keys or values; the Lua library checks it. */
    public static final int LAYOUT_VERSION = ViewContract.LAYOUT;
    public static final String FUNCTION_LIBRARY = "kvrouter";
    /** Places a request and records its reservation (FCALL). */
    public static final String PICK_FUNCTION = ViewContract.Functions.KVR_PICK;
    /** The same answer without a reservation, read-only (FCALL_RO): for observers. */
    public static final String PEEK_FUNCTION = ViewContract.Functions.KVR_PEEK;
    /** Places a request matched by the caller, in the head slot (Redis Cluster's second round trip). */
    public static final String PLACE_FUNCTION = ViewContract.Functions.KVR_PLACE;
    /** Releases reservations of requests that are done. */
    public static final String DONE_FUNCTION = ViewContract.Functions.KVR_DONE;
    /** Keeps the places of requests a balancer still holds (every engine full) in the waiting room. */
    public static final String HOLDING_FUNCTION = ViewContract.Functions.KVR_HOLDING;
    /** The layout version the loaded library speaks (read-only). */
    public static final String LAYOUT_FUNCTION = ViewContract.Functions.KVR_LAYOUT;
    /** The library function answering its revision within the layout (see {@link #libraryRevision()}). */
    public static final String REVISION_FUNCTION = ViewContract.Functions.KVR_REVISION;

    // The view's defaults, declared once for the job that writes the view and the clients that read
    // it (KvRouterJobOptions, RedisViewSinkOptions, KvRouterClient.Options).

    /** Prefix of every key of the view. */
    public static final String DEFAULT_KEY_PREFIX = "kvr:";
    /** Canonical block size in tokens. */
    public static final int DEFAULT_CHUNK_TOKENS = ViewContract.Meta.DEFAULT_CHUNK_TOKENS;
    /** Chain depth whose hash tags a block's key. */
    public static final int DEFAULT_TAG_DEPTH = ViewContract.Meta.DEFAULT_TAG_DEPTH;
    /** k: before an engine's slots and slot time are learned, pick spills from it past k x the fleet mean and k requests. */
    public static final double DEFAULT_BUSY_FACTOR = ViewContract.Meta.DEFAULT_BUSY_FACTOR;
    /** An entry whose confidence falls below this is not used. */
    public static final double DEFAULT_CONFIDENCE_FLOOR = ViewContract.Meta.DEFAULT_CONFIDENCE_FLOOR;
    /** The largest share of one client's requests in flight that pick sends to one engine. */
    public static final double DEFAULT_CLIENT_CAP = ViewContract.Meta.DEFAULT_CLIENT_CAP;
    /** The client cap (and a burst's spare copy) applies from this many requests of the client in flight. */
    public static final int DEFAULT_CLIENT_MIN_INFLIGHT = ViewContract.Meta.DEFAULT_CLIENT_MIN_INFLIGHT;

    private final String prefix;

    public ViewLayout(String prefix) {
        if (prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
            throw new IllegalArgumentException("the view's key prefix may not contain braces (they make Redis Cluster hash tags), was '"
                    + prefix + "'");
        }
        this.prefix = prefix;
    }

    public String prefix() {
        return prefix;
    }

    public String metaKey() {
        return prefix + ViewContract.Keys.META;
    }

    public String enginesKey() {
        return prefix + ViewContract.Keys.ENGINES;
    }

    /** The balancers' reservations: field request id, value {@code engine|at_ms|uncached tokens|client} (kvrouter.lua). */
    public String reservationsKey() {
        return prefix + ViewContract.Keys.RESERVATIONS;
    }

    /**
     * The keys every function of the library takes (layout 9): the reservations key alone. The
     * library finds the view's keys from it; declaring only the key a call writes lets a balancer's
     * Redis user write its reservations and only read the view (Redis checks every key given to
     * {@code FCALL} as one the caller may write).
     */
    public String[] functionKeys() {
        return new String[] {reservationsKey()};
    }

    /**
     * Pending prefixes: field a placed prompt's block hash at a sampled position, value the engines
     * it was placed on, {@code engine=ready_ms.epoch} (base 36) comma-separated (kvrouter.lua).
     */
    public String pendingKey() {
        return reservationsKey() + ViewContract.ReservationKeys.PENDING;
    }

    /**
     * The waiting room: requests a balancer holds while every engine is full, scored by when they were
     * first held (the order they go in); {@code <this>:seen} scores them by when their balancer last
     * asked (kvrouter.lua, HOLD_STALE_MS).
     */
    public String heldRequestsKey() {
        return reservationsKey() + ViewContract.ReservationKeys.HOLD;
    }

    /** One engine's live reservations, request ids scored by when they were made. */
    public String engineReservationsKey(String engineId) {
        return reservationsKey() + ViewContract.ReservationKeys.ENGINE + engineId;
    }

    /** One client's live reservations per engine: field engine, value count. */
    public String clientReservationsKey(String clientId) {
        return reservationsKey() + ViewContract.ReservationKeys.CLIENT + clientId;
    }

    /** Requests in flight per client: field client id, value {@code engine=count,…}. */
    public String clientsKey() {
        return prefix + ViewContract.Keys.CLIENTS;
    }

    /** Affinity per prefix class: field class, value {@code on} or {@code off} (absent: on). */
    public String classesKey() {
        return prefix + ViewContract.Keys.CLASSES;
    }

    /** Latest per-class ratios: field {@code <class>/<tumbling|sliding>}. */
    public String ratiosKey() {
        return prefix + ViewContract.Keys.RATIOS;
    }

    public String groupKey(long tagHash) {
        return prefix + ViewContract.Keys.GROUP + hex(tagHash) + "}";
    }

    /**
     * The 1-based positions of a prompt of {@code n} blocks whose hashes a placement records as
     * pending and a pick looks up (kvrouter.lua, "Pending prefixes"): 1, 2, 4, … below n, and n.
     */
    public static int[] pendingPositions(int n) {
        int[] at = new int[n <= 0 ? 0 : 1 + (32 - Integer.numberOfLeadingZeros(n - 1))];
        int i = 0;
        for (int p = 1; p < n; p *= 2) {
            at[i++] = p;
        }
        if (n > 0) {
            at[i++] = n;
        }
        return at;
    }

    /** The group tag of the block at 1-based {@code position} in a chain, given the chain's hashes. */
    public static long tag(long[] chain, int position, int tagDepth) {
        return chain[Math.min(position, tagDepth) - 1];
    }

    /** The hash as 16 lower-case hex digits, unsigned (the job formats one per view write: one array, no builder). */
    public static String hex(long hash) {
        byte[] digits = new byte[16];
        for (int i = 15; i >= 0; i--, hash >>>= 4) {
            digits[i] = DIGITS[(int) (hash & 0xF)];
        }
        return new String(digits, java.nio.charset.StandardCharsets.ISO_8859_1);
    }

    /** Appends {@link #hex}'s 16 digits. */
    private static StringBuilder appendHex(StringBuilder out, long hash) {
        for (int shift = 60; shift >= 0; shift -= 4) {
            out.append((char) DIGITS[(int) ((hash >>> shift) & 0xF)]);
        }
        return out;
    }

    /** Digits of base 16 and 36, lower case. */
    private static final byte[] DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);

    /** The first {@code n} hashes of {@code chain} as kvr_pick takes them: one string, 16 hex digits each. */
    public static String packedHex(long[] chain, int n) {
        StringBuilder packed = new StringBuilder(16 * n);
        for (int i = 0; i < n; i++) {
            appendHex(packed, chain[i]);
        }
        return packed.toString();
    }

    public static long parseHex(String hex) {
        return Long.parseUnsignedLong(hex, 16);
    }

    /** One holder in a block field: {@code engine=stored_ms.epoch}, both numbers in base 36. */
    public static String holder(String engineId, long storedAtMs, long epoch) {
        return appendHolder(new StringBuilder(engineId.length() + 16), engineId, storedAtMs, epoch).toString();
    }

    /** Appends one holder ({@link #holder}) to a block field being built, without a string of its own per number. */
    public static StringBuilder appendHolder(StringBuilder field, String engineId, long storedAtMs, long epoch) {
        field.append(engineId).append('=');
        appendBase36(field, storedAtMs);
        field.append('.');
        appendBase36(field, epoch);
        return field;
    }

    /** As {@code Long.toString(x, 36)}. */
    private static void appendBase36(StringBuilder out, long x) {
        if (x < 0) {
            out.append(Long.toString(x, 36)); // never in a view (times and epochs), but the same text
            return;
        }
        char[] digits = new char[13]; // 36^13 > 2^63
        int at = digits.length;
        do {
            digits[--at] = (char) DIGITS[(int) (x % 36)];
            x /= 36;
        } while (x > 0);
        out.append(digits, at, digits.length - at);
    }

    /** The revision of the library this jar carries ({@code local REVISION = N}, src/main/lua/kvrouter/00-library.lua). */
    public static int libraryRevision() {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^local REVISION = (\\d+)$").matcher(functionLibrary());
        if (!m.find()) {
            throw new IllegalStateException("kvrouter.lua declares no 'local REVISION = N'");
        }
        return Integer.parseInt(m.group(1));
    }

    /** The Lua function library, as loaded into Redis (joined at build: the contract's head, then src/main/lua/kvrouter). */
    public static String functionLibrary() {
        return resource("kvrouter.lua");
    }

    /**
     * The contract as the nginx gateway's Lua module {@code kvr.contract} (function names, keys, answer positions,
     * reasons), generated from kvr-view.yaml like {@link ViewContract}.
     */
    public static String gatewayContractLua() {
        return resource("gateway-contract.lua");
    }

    /** A text file of this package in the jar (the library, the shipped Redis users). */
    static String resource(String name) {
        try (InputStream in = ViewLayout.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException(name + " is missing from the kvr-view-contract jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + name, e);
        }
    }
}
