package dev.kvrouter.balancer;

import dev.kvrouter.redis.EngineEntry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The pick, in Java, from plain reads of the view: what {@code kvr_pick} does inside Redis, for
 * clients that cannot run it in one call (Redis Cluster, where the keys of a pick sit in several
 * slots). Keep in step with kvrouter.lua; PickFunctionITCase runs every case through both.
 */
public final class PickPolicy {

    private static final Pattern HOLDER = Pattern.compile("([^,=]+)=(\\w+)\\.(\\w+)");

    private PickPolicy() {}

    /** The view as read: meta figures, the engine table, and each prompt block's holder value (null when absent). */
    /**
     * @param clientInflight the client's requests in flight per engine; null for a request without a client id
     * @param clientCap      the largest share of them one engine may take, from the cap's minimum on
     * @param prefillBacklog per engine, the milliseconds of prefill this balancer's recent picks still
     *                       have ahead of a new request there ({@link #prefillBacklog}); empty when unknown
     */
    public record ViewRead(long updatedMs, double busyFactor, double floor, Map<String, EngineEntry> engines, List<String> blocks,
                           boolean classAffinityOff, Map<String, Integer> clientInflight, double clientCap, int clientMinInflight,
                           Cost cost, Map<String, Double> prefillBacklog) {

        boolean overClientCap(String engine) {
            if (clientInflight == null) {
                return false;
            }
            int total = clientInflight.values().stream().mapToInt(Integer::intValue).sum();
            if (total + 1 < clientMinInflight) {
                return false;
            }
            return (clientInflight.getOrDefault(engine, 0) + 1.0) / (total + 1) > clientCap;
        }
    }

    /**
     * What a placement is expected to save (the cost view): HIT skips the matched prefill; TRANSFER
     * moves the best holder's KV when that is faster than recomputing it; COLD saves nothing.
     */
    public record Saving(String outcome, int tokens, double usd, double prefillMs) {
        public static final Saving NONE = new Saving("COLD", 0, 0, 0);
    }

    /**
     * The cost model's figures as the view publishes them in its meta key; null where not configured.
     * {@code uncachedPrefillWeight}: how the least-delay placement weighs the prefill an engine lacks.
     */
    public record Cost(int chunkTokens, Double kvBytesPerToken, Double prefillTokensPerS, Double fabricBytesPerS, double usdPerMillion,
                       double uncachedPrefillWeight) {
        public static final Cost NONE = new Cost(16, null, null, null, 0, 3);

        Saving of(int matched, int bestDepth) {
            if (matched > 0) {
                int tokens = matched * chunkTokens;
                return new Saving("HIT", tokens, usd(tokens),
                        prefillTokensPerS == null ? 0 : round1(tokens / prefillTokensPerS * 1000));
            }
            if (bestDepth > 0 && kvBytesPerToken != null && prefillTokensPerS != null && fabricBytesPerS != null) {
                int tokens = bestDepth * chunkTokens;
                double transferMs = tokens * kvBytesPerToken / fabricBytesPerS * 1000;
                double prefillMs = tokens / prefillTokensPerS * 1000;
                if (transferMs < prefillMs) {
                    return new Saving("TRANSFER", tokens, usd(tokens), round1(prefillMs - transferMs));
                }
            }
            return Saving.NONE;
        }

        /** Dollars to the micro-dollar, as kvr_pick prints them. */
        private double usd(int tokens) {
            return Math.round(tokens * usdPerMillion) / 1_000_000.0;
        }

        static double round1(double v) {
            return Math.round(v * 10) / 10.0;
        }
    }

    /**
     * Disaggregated serving: the decode engine the prefill engine hands the prompt's KV to, and how
     * long that hand-off takes (on the TTFT path, whatever the prefix cache saved). NONE when the
     * fleet has no DECODE pool.
     */
    public record Handoff(String decodeEngineId, double ms) {
        public static final Handoff NONE = new Handoff("", 0);
    }

    public record Choice(String engineId, int matchedBlocks, String reason, long viewAgeMs, double confidence, Saving saving,
                         Handoff handoff) {}

    public static Choice choose(ViewRead view, long nowMs, long maxViewAgeMs) {
        long age = nowMs - view.updatedMs();
        double horizon = -Math.log(view.floor());
        // Prompts go to BOTH and PREFILL engines; a DECODE pool only takes hand-offs, with its own mean.
        Map<String, EngineEntry> live = new HashMap<>();
        Map<String, EngineEntry> decoders = new HashMap<>();
        double total = 0;
        for (var e : view.engines().entrySet()) {
            String s = e.getValue().status();
            if (!"DEAD".equals(s) && !"RESTARTED".equals(s)) {
                if (e.getValue().decodeOnly()) {
                    decoders.put(e.getKey(), e.getValue());
                } else {
                    live.put(e.getKey(), e.getValue());
                    total += e.getValue().load();
                }
            }
        }
        double mean = live.isEmpty() ? 0 : total / live.size();
        Handoff handoff = handoff(decoders, view);
        if (age > maxViewAgeMs || view.blocks().isEmpty()) {
            return new Choice(leastLoaded(live, mean, view), 0, age > maxViewAgeMs ? "FALLBACK_LOAD_ONLY" : "COLD", age, 0, Saving.NONE,
                    handoff);
        }
        if (view.classAffinityOff()) {
            return new Choice(leastLoaded(live, mean, view), 0, "NO_AFFINITY_CLASS", age, 0, Saving.NONE, handoff);
        }
        Map<String, Integer> depth = new HashMap<>();
        Map<String, Double> conf = new HashMap<>();
        for (int i = 0; i < view.blocks().size(); i++) {
            Map<String, long[]> holders = holders(view.blocks().get(i));
            boolean advanced = false;
            for (var h : holders.entrySet()) {
                String id = h.getKey();
                if (i > 0 && depth.getOrDefault(id, 0) != i) {
                    continue;
                }
                double c = confidence(live.get(id), h.getValue(), nowMs, view.floor(), horizon);
                if (c > 0) {
                    depth.put(id, i + 1);
                    conf.put(id, c);
                    advanced = true;
                }
            }
            if (!advanced) {
                break;
            }
        }
        if (depth.isEmpty()) {
            return new Choice(leastLoaded(live, mean, view), 0, "COLD", age, 0, Saving.NONE, handoff);
        }
        // Holders matching within 10 % of the longest run are replicas of the same prefix: least
        // loaded first, so a hot prefix spreads over its replicas by load (ties: the more confident);
        // the rest follow by blocks times confidence (for REPLICA).
        int bestDepth = depth.values().stream().mapToInt(Integer::intValue).max().orElse(0);
        java.util.function.Predicate<String> nearBest = id -> depth.get(id) * 10 >= bestDepth * 9;
        List<String> ranked = new ArrayList<>(depth.keySet());
        ranked.sort((a, b) -> {
            boolean na = nearBest.test(a);
            boolean nb = nearBest.test(b);
            if (na != nb) {
                return na ? -1 : 1;
            }
            int c = na ? Integer.compare(live.get(a).load(), live.get(b).load()) : 0;
            if (c == 0) {
                c = Double.compare(depth.get(b) * conf.get(b), depth.get(a) * conf.get(a));
            }
            return c != 0 ? c : a.compareTo(b);
        });
        String first = ranked.get(0);
        String why = overloaded(live.get(first), mean, view.busyFactor());
        if (why == null && view.overClientCap(first)) {
            why = "SPILL_CLIENT_CAP";
        }
        if (why == null) {
            String better = lessDelayThan(first, depth, live, mean, view);
            if (better != null) {
                int d = depth.getOrDefault(better, 0);
                return new Choice(better, d, d > 0 ? "REPLICA" : "SPILL_BUSY", age, d > 0 ? round(conf.get(better)) : 0,
                        view.cost().of(d, bestDepth), handoff);
            }
            return new Choice(first, depth.get(first), "AFFINITY", age, round(conf.get(first)),
                    view.cost().of(depth.get(first), bestDepth), handoff);
        }
        for (String id : ranked.subList(1, ranked.size())) {
            if (overloaded(live.get(id), mean, view.busyFactor()) == null && !view.overClientCap(id)) {
                return new Choice(id, depth.get(id), "REPLICA", age, round(conf.get(id)), view.cost().of(depth.get(id), bestDepth), handoff);
            }
        }
        return new Choice(leastLoaded(live, mean, view), 0, why, age, 0, view.cost().of(0, bestDepth), handoff);
    }

    /**
     * The engine where the request costs less delay than on {@code first}, if any: the prefill this
     * balancer's recent picks still have queued there, plus the prefill of the prompt's blocks that
     * engine lacks times the uncached-prefill weight (3: for this request's first token, for the
     * requests queued behind its prefill there, and for the cache room a second copy of another
     * engine's blocks takes); fewest ms, ties: the longer run, the lower load, the id. Null without
     * a prefill rate or a backlog to weigh. As kvr_pick.
     */
    static String lessDelayThan(String first, Map<String, Integer> depth, Map<String, EngineEntry> live, double mean, ViewRead view) {
        Double rate = view.cost().prefillTokensPerS();
        if (rate == null || view.prefillBacklog().isEmpty()) {
            return null;
        }
        int n = view.blocks().size();
        java.util.function.ToDoubleFunction<String> delay = id -> view.prefillBacklog().getOrDefault(id, 0.0)
                + view.cost().uncachedPrefillWeight() * (n - depth.getOrDefault(id, 0)) * (double) view.cost().chunkTokens() / rate * 1000;
        java.util.Comparator<String> sooner = java.util.Comparator.comparingDouble(delay)
                .thenComparing(id -> -depth.getOrDefault(id, 0))
                .thenComparingInt(id -> live.get(id).load())
                .thenComparing(java.util.Comparator.naturalOrder());
        return live.keySet().stream()
                .filter(id -> overloaded(live.get(id), mean, view.busyFactor()) == null && !view.overClientCap(id))
                .min(sooner)
                .filter(best -> delay.applyAsDouble(best) < delay.applyAsDouble(first))
                .orElse(null);
    }

    /**
     * Per engine, the milliseconds of prefill still ahead of a new request from this balancer's own
     * picks: each pick adds its uncached tokens at the prefill rate, and the queue drains in real
     * time. {@code picks} are (engine, epoch ms, prefill tokens), oldest first.
     */
    public static Map<String, Double> prefillBacklog(List<RecentPick> picks, double prefillTokensPerS, long nowMs) {
        Map<String, Double> backlog = new HashMap<>();
        Map<String, Long> at = new HashMap<>();
        for (RecentPick p : picks) {
            double queued = Math.max(0, backlog.getOrDefault(p.engineId(), 0.0) - (p.atMs() - at.getOrDefault(p.engineId(), p.atMs())));
            backlog.put(p.engineId(), queued + p.prefillTokens() / prefillTokensPerS * 1000);
            at.put(p.engineId(), p.atMs());
        }
        backlog.replaceAll((id, queued) -> Math.max(0, queued - (nowMs - at.get(id))));
        return backlog;
    }

    /** One of a balancer's own placements: the request went to {@code engineId} at {@code atMs} with {@code prefillTokens} not cached there. */
    public record RecentPick(String engineId, long atMs, int prefillTokens) {}

    /** The least loaded ready, not hot decode engine (else the least loaded), and the whole prompt's KV hand-off to it. */
    static Handoff handoff(Map<String, EngineEntry> decoders, ViewRead view) {
        if (decoders.isEmpty()) {
            return Handoff.NONE;
        }
        double mean = decoders.values().stream().mapToInt(EngineEntry::load).average().orElse(0);
        String best = leastLoaded(decoders, id -> "READY".equals(decoders.get(id).status())
                && !(mean > 0 && decoders.get(id).load() > view.busyFactor() * mean));
        if (best.isEmpty()) {
            best = leastLoaded(decoders, id -> true);
        }
        Cost c = view.cost();
        double ms = c.kvBytesPerToken() == null || c.fabricBytesPerS() == null ? 0
                : (double) view.blocks().size() * c.chunkTokens() * c.kvBytesPerToken() / c.fabricBytesPerS() * 1000;
        return new Handoff(best, Cost.round1(ms));
    }

    /** Confidence of one holder entry, 0 when it does not count (unknown engine, old epoch, below the floor). */
    private static double confidence(EngineEntry e, long[] storedAndEpoch, long now, double floor, double horizon) {
        if (e == null || storedAndEpoch[1] != e.epoch()) {
            return 0;
        }
        double age = (double) (now - storedAndEpoch[0]) / e.tauMs();
        double c = Math.exp(-age);
        if (e.unsynced()) {
            c *= 0.5;
        }
        return c < floor || age > horizon ? 0 : c;
    }

    static String overloaded(EngineEntry e, double mean, double busyFactor) {
        String s = e.status();
        if ("BUSY".equals(s) || "DRAINING".equals(s) || "SUSPECT".equals(s)) {
            return "SPILL_BUSY";
        }
        return mean > 0 && e.load() > busyFactor * mean ? "SPILL_HOT" : null;
    }

    /** The least-loaded engine that is neither overloaded nor over the client's cap; failing that, not overloaded; else any. */
    static String leastLoaded(Map<String, EngineEntry> live, double mean, ViewRead view) {
        String best = leastLoaded(live, e -> overloaded(live.get(e), mean, view.busyFactor()) == null && !view.overClientCap(e));
        if (best.isEmpty()) {
            best = leastLoaded(live, e -> overloaded(live.get(e), mean, view.busyFactor()) == null);
        }
        return best.isEmpty() ? leastLoaded(live, e -> true) : best;
    }

    private static String leastLoaded(Map<String, EngineEntry> live, java.util.function.Predicate<String> allowed) {
        String best = "";
        int bestLoad = Integer.MAX_VALUE;
        for (var e : live.entrySet()) {
            int load = e.getValue().load();
            if (allowed.test(e.getKey()) && (load < bestLoad || (load == bestLoad && e.getKey().compareTo(best) < 0))) {
                best = e.getKey();
                bestLoad = load;
            }
        }
        return best;
    }

    /** engine → requests in flight, from a clients field's value ({@code engine=count,…}). */
    public static Map<String, Integer> inflight(String value) {
        Map<String, Integer> m = new HashMap<>();
        if (value != null) {
            for (String part : value.split(",")) {
                int eq = part.indexOf('=');
                if (eq > 0) {
                    m.put(part.substring(0, eq), Integer.parseInt(part.substring(eq + 1)));
                }
            }
        }
        return m;
    }

    /** engine → {stored ms, epoch} from a block field's value. */
    static Map<String, long[]> holders(String value) {
        Map<String, long[]> h = new HashMap<>();
        if (value != null) {
            Matcher m = HOLDER.matcher(value);
            while (m.find()) {
                h.put(m.group(1), new long[] {Long.parseLong(m.group(2), 36), Long.parseLong(m.group(3), 36)});
            }
        }
        return h;
    }

    private static double round(double c) {
        return Math.round(c * 10_000) / 10_000.0;
    }
}
