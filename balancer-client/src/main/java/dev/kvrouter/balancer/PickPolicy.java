package dev.kvrouter.balancer;

import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.contract.ViewContract;
import dev.kvrouter.contract.ViewLayout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The part of a pick a balancer does itself on Redis Cluster, where the prompt's groups sit in
 * other slots than the engine table: the prompt's match against the view (each holder's run of
 * blocks from the first, and its confidence), exactly as {@code kvr_pick} computes it. The
 * placement itself is always made in Redis ({@code kvr_place}), so every rule of it lives once, in
 * the view's function library; PickFunctionITCase runs every case through both paths.
 */
public final class PickPolicy {

    private static final Pattern HOLDER = Pattern.compile("([^,=]+)=(\\w+)\\.(\\w+)");

    private PickPolicy() {}

    /** A holder's run: {@code depth} consecutive blocks from the first, the last of them with {@code confidence}. */
    public record Run(int depth, double confidence) {}

    /**
     * What a placement is expected to save and what it costs (the cost view): HIT skips the matched
     * prefill; TRANSFER moves the best holder's KV when that is faster than recomputing it; COLD saves
     * nothing. {@code addedWaitMs}: how much later the request starts on the chosen engine than on
     * the engine the least delay picks with nobody's cache counted (the queueing affinity adds).
     * kvr_pick takes a holder only where {@code cost.uncached-prefill-weight} times the prefill
     * skipped outweighs that wait.
     */
    public record Saving(String outcome, int tokens, double usd, double prefillMs, double addedWaitMs) {
        public static final Saving NONE = new Saving(ViewContract.Outcome.COLD.name(), 0, 0, 0);

        /** A saving that adds no wait. */
        public Saving(String outcome, int tokens, double usd, double prefillMs) {
            this(outcome, tokens, usd, prefillMs, 0);
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

    /**
     * Each engine's run over the prompt's blocks (each block's holder value, null when absent), first
     * block on, counting only entries of the engine's current epoch with a confidence at or above
     * {@code floor}, found as kvr_pick finds it: the prefix property (an engine holds block k only
     * if it holds blocks 1..k-1) lets the run's end be searched for — the sampled positions 1, 2, 4,
     * … below n, and n, then bisection between the last held and the first not held — instead of
     * read block by block. Where the view has a hole (an entry missing or lapsed before a later one
     * of the same engine), the run ends there only if a probe lands on it; elsewhere the answer is
     * {@link #consecutiveRuns}'s.
     */
    public static Map<String, Run> match(Map<String, EngineEntry> engines, List<String> blocks, long nowMs, double floor) {
        double horizon = -Math.log(floor);
        Map<String, Run> runs = new HashMap<>();
        if (blocks.isEmpty()) {
            return runs;
        }
        int n = blocks.size();
        int[] at = ViewLayout.pendingPositions(n);
        List<Map<String, long[]>> parsed = new ArrayList<>(Collections.nCopies(n, null));
        for (var first : holdersAt(blocks, parsed, 1).entrySet()) {
            EngineEntry e = engines.get(first.getKey());
            double c = e == null || e.decodeOnly() ? 0 : confidence(e, first.getValue(), nowMs, floor, horizon);
            if (c <= 0) {
                continue;
            }
            int lo = 1;
            int hi = 0; // 0: no position found not held
            double loConfidence = c;
            for (int i = 1; i < at.length; i++) {
                double ci = heldConfidence(e, holdersAt(blocks, parsed, at[i]).get(first.getKey()), nowMs, floor, horizon);
                if (ci <= 0) {
                    hi = at[i];
                    break;
                }
                lo = at[i];
                loConfidence = ci;
            }
            while (hi - lo > 1) {
                int mid = (lo + hi) >>> 1;
                double ci = heldConfidence(e, holdersAt(blocks, parsed, mid).get(first.getKey()), nowMs, floor, horizon);
                if (ci > 0) {
                    lo = mid;
                    loConfidence = ci;
                } else {
                    hi = mid;
                }
            }
            runs.put(first.getKey(), new Run(lo, loConfidence));
        }
        return runs;
    }

    /**
     * Each engine's longest consecutive run of held blocks from the first, reading every block: what
     * {@link #match} answers wherever the view keeps the prefix property. The reference the search is
     * checked against (tests, and the simulator's audit of how often the property fails).
     */
    public static Map<String, Run> consecutiveRuns(Map<String, EngineEntry> engines, List<String> blocks, long nowMs, double floor) {
        double horizon = -Math.log(floor);
        Map<String, Run> runs = new HashMap<>();
        for (int i = 0; i < blocks.size(); i++) {
            boolean advanced = false;
            for (var h : holders(blocks.get(i)).entrySet()) {
                String id = h.getKey();
                Run sofar = runs.get(id);
                if (i > 0 && (sofar == null || sofar.depth() != i)) {
                    continue;
                }
                EngineEntry e = engines.get(id);
                double c = e == null || e.decodeOnly() ? 0 : confidence(e, h.getValue(), nowMs, floor, horizon);
                if (c > 0) {
                    runs.put(id, new Run(i + 1, c));
                    advanced = true;
                }
            }
            if (!advanced) {
                break;
            }
        }
        return runs;
    }

    /** The holders at 1-based position {@code p}, parsed once. */
    private static Map<String, long[]> holdersAt(List<String> blocks, List<Map<String, long[]>> parsed, int p) {
        Map<String, long[]> h = parsed.get(p - 1);
        if (h == null) {
            h = holders(blocks.get(p - 1));
            parsed.set(p - 1, h);
        }
        return h;
    }

    private static double heldConfidence(EngineEntry e, long[] entry, long now, double floor, double horizon) {
        return entry == null ? 0 : confidence(e, entry, now, floor, horizon);
    }

    /** kvr_place's last argument: {@code engine=depth:confidence,…}. */
    public static String runsArgument(Map<String, Run> runs) {
        StringBuilder arg = new StringBuilder();
        runs.forEach((id, r) -> arg.append(arg.length() == 0 ? "" : ",").append(id).append('=').append(r.depth()).append(':')
                .append(r.confidence()));
        return arg.toString();
    }

    /** Confidence of one holder entry, 0 when it does not count (old epoch, below the floor). */
    private static double confidence(EngineEntry e, long[] storedAndEpoch, long now, double floor, double horizon) {
        if (storedAndEpoch[1] != e.epoch() || ViewContract.EngineStatus.gone(e.status())) {
            return 0;
        }
        double age = (double) (now - storedAndEpoch[0]) / e.tauMs();
        double c = Math.exp(-age);
        if (e.unsynced()) {
            c *= 0.5;
        }
        return c < floor || age > horizon ? 0 : c;
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
}
