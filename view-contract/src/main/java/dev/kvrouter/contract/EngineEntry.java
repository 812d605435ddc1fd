package dev.kvrouter.contract;

/**
 * An engine as the view publishes it, the value of its field in {@code <prefix>engines}:
 * {@code status|waiting|running|kv_permille|tau_ms|epoch|unsynced|load_ms|role|slots|prefill_tps|slot_ms}.
 *
 * @param status      READY, BUSY, SUSPECT, DRAINING (DEAD and RESTARTED engines are removed)
 * @param kvPermille  KV cache usage in thousandths
 * @param tauMs       the engine's current residency time: a block stored {@code a} ms ago is still
 *                    there with confidence {@code exp(-a / tau)}
 * @param epoch       bumped when the engine restarts or is declared dead: older entries are void
 * @param unsynced    events were lost (sequence gap): confidence is halved until it resyncs
 * @param loadAtMs    when the engine measured {@code waiting} and {@code running} (its last load
 *                    report's time, never later than the job's clock): a balancer's picks after it
 *                    are not in them yet
 * @param role        BOTH (unified serving), or PREFILL / DECODE (the pools of disaggregated serving)
 * @param slots       requests the engine runs at once, learned from its reports (the most it ran while others
 *                    waited); 0 while unknown. A request placed where all are taken waits for one to finish.
 * @param prefillTokensPerS the rate the engine prefills at, learned by the job from its requests' outcomes;
 *                    0 while unknown (the pick then assumes {@code prefill_tokens_per_s} of the meta key)
 * @param slotMs      the mean time a request holds one of the engine's slots, start to end, learned by the job
 *                    from its requests; 0 while unknown. With every slot taken, a request waits about
 *                    {@code slotMs / slots} per request ahead of it.
 * @param kvFreeTokens the tokens the engine's KV cache had free at the report (capacity less what its running
 *                    requests hold: vLLM admits a request only once its blocks fit); -1 while unknown or not
 *                    published (the job's {@code engine.kv-room}), and then left out of the entry
 */
public record EngineEntry(String status, int waiting, int running, int kvPermille, long tauMs, long epoch,
                          boolean unsynced, long loadAtMs, String role, int slots, int prefillTokensPerS, int slotMs,
                          long kvFreeTokens) {

    public static final String BOTH = "BOTH";
    public static final String DECODE = "DECODE";

    /** An engine whose free KV room is not published. */
    public EngineEntry(String status, int waiting, int running, int kvPermille, long tauMs, long epoch, boolean unsynced,
                       long loadAtMs, String role, int slots, int prefillTokensPerS, int slotMs) {
        this(status, waiting, running, kvPermille, tauMs, epoch, unsynced, loadAtMs, role, slots, prefillTokensPerS, slotMs, -1);
    }

    /** A unified-serving engine (role BOTH). */
    public EngineEntry(String status, int waiting, int running, int kvPermille, long tauMs, long epoch, boolean unsynced,
                       long loadAtMs) {
        this(status, waiting, running, kvPermille, tauMs, epoch, unsynced, loadAtMs, BOTH, 0, 0, 0);
    }

    /** An engine whose slots are not known yet. */
    public EngineEntry(String status, int waiting, int running, int kvPermille, long tauMs, long epoch, boolean unsynced,
                       long loadAtMs, String role) {
        this(status, waiting, running, kvPermille, tauMs, epoch, unsynced, loadAtMs, role, 0, 0, 0);
    }

    /** An engine whose speeds are not known yet. */
    public EngineEntry(String status, int waiting, int running, int kvPermille, long tauMs, long epoch, boolean unsynced,
                       long loadAtMs, String role, int slots) {
        this(status, waiting, running, kvPermille, tauMs, epoch, unsynced, loadAtMs, role, slots, 0, 0);
    }

    public String encode() {
        return status + '|' + waiting + '|' + running + '|' + kvPermille + '|' + tauMs + '|' + epoch + '|'
                + (unsynced ? '1' : '0') + '|' + loadAtMs + '|' + role + '|' + slots + '|' + prefillTokensPerS + '|' + slotMs
                + (kvFreeTokens >= 0 ? "|" + kvFreeTokens : "");
    }

    public static EngineEntry decode(String value) {
        String[] f = value.split("\\|", -1);
        if (f.length < 8) {
            throw new IllegalArgumentException("not an engine entry: " + value);
        }
        return new EngineEntry(f[0], Integer.parseInt(f[1]), Integer.parseInt(f[2]), Integer.parseInt(f[3]),
                Long.parseLong(f[4]), Long.parseLong(f[5]), "1".equals(f[6]), Long.parseLong(f[7]),
                f.length > 8 && !f[8].isEmpty() ? f[8] : BOTH, f.length > 9 && !f[9].isEmpty() ? Integer.parseInt(f[9]) : 0,
                f.length > 10 && !f[10].isEmpty() ? Integer.parseInt(f[10]) : 0,
                f.length > 11 && !f[11].isEmpty() ? Integer.parseInt(f[11]) : 0,
                f.length > 12 && !f[12].isEmpty() ? Long.parseLong(f[12]) : -1);
    }

    /** A decode-pool engine: it takes hand-offs, not prompts. */
    public boolean decodeOnly() {
        return DECODE.equals(role);
    }

    public int load() {
        return waiting + running;
    }
}
