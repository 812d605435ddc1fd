package dev.kvrouter.sim.explain;

import dev.kvrouter.common.AffinityCost;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.OutcomeStatus;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RoutingDecision;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * What a run's tail is made of, from its decisions and outcomes joined by request id: the requests
 * per route reason with their TTFT p50 and p99, the slowest share split by reason, class and
 * engine, the slowest requests one by one, and optionally every request of a time window. Times are
 * seconds from the first decision. A decision without an outcome (still running, or lost) is
 * counted apart and left out of the percentiles. For one engine and a window, its requests and
 * its load reports: what it said while they waited.
 */
public final class TailReport {

    /** One request: its decision and, once it finished, its outcome. */
    public record Request(RoutingDecision decision, RequestOutcome outcome) {
        double ttftMs() {
            return outcome.getTtftMs();
        }
    }

    /**
     * What to print: the slowest share, how many requests one by one, a window (seconds, or NaN), a
     * class filter (or null), and an engine (or null) whose requests and load reports the window lists.
     */
    public record Settings(double worstPercent, int slowest, double fromSeconds, double toSeconds, String prefixClass, String engine) {
        public Settings {
            if (!(worstPercent > 0 && worstPercent <= 100)) {
                throw new IllegalArgumentException("--worst must be a percentage in (0, 100], got " + worstPercent);
            }
            if (slowest < 0) {
                throw new IllegalArgumentException("--slowest must be 0 or more, got " + slowest);
            }
            if (Double.isNaN(fromSeconds) != Double.isNaN(toSeconds) || fromSeconds > toSeconds) {
                throw new IllegalArgumentException("--from and --to go together, from <= to; got " + fromSeconds + " and " + toSeconds);
            }
            if (engine != null && Double.isNaN(fromSeconds)) {
                throw new IllegalArgumentException("--engine lists a window: give --from and --to as well");
            }
        }
    }

    private TailReport() {}

    /** Joins decisions and outcomes by request id, in decision order. */
    public static List<Request> join(List<RoutingDecision> decisions, List<RequestOutcome> outcomes) {
        Map<String, RequestOutcome> byId = new HashMap<>();
        for (RequestOutcome o : outcomes) {
            byId.put(o.getRequestId(), o);
        }
        List<Request> joined = new ArrayList<>(decisions.size());
        for (RoutingDecision d : decisions) {
            joined.add(new Request(d, byId.get(d.getRequestId())));
        }
        joined.sort(Comparator.comparingLong(r -> r.decision().getTsMs()));
        return joined;
    }

    public static String render(List<Request> requests, Settings settings) {
        return render(requests, List.of(), settings);
    }

    /** The same, with the engines' load reports (for {@link Settings#engine()}). */
    public static String render(List<Request> requests, List<EngineLoad> loads, Settings settings) {
        StringBuilder out = new StringBuilder();
        if (requests.isEmpty()) {
            return "no decisions on the topic: was the run published to Kafka (--publish) under this topic prefix?\n";
        }
        long start = requests.get(0).decision().getTsMs();
        List<Request> done = new ArrayList<>();
        for (Request r : requests) {
            if (r.outcome() != null && (settings.prefixClass() == null || settings.prefixClass().equals(r.decision().getPrefixClass()))
                    && (settings.engine() == null || settings.engine().equals(r.decision().getEngineId()))) {
                done.add(r);
            }
        }
        long unfinished = requests.stream().filter(r -> r.outcome() == null).count();
        out.append(String.format(Locale.ROOT, "%d decisions, %d with an outcome, %d without%s%n", requests.size(),
                requests.size() - unfinished, unfinished, settings.prefixClass() == null ? "" : "; class " + settings.prefixClass() + ": " + done.size()));
        if (done.isEmpty()) {
            return out.toString();
        }
        List<Request> bySpeed = new ArrayList<>(done);
        bySpeed.sort(Comparator.comparingDouble(Request::ttftMs));
        out.append(String.format(Locale.ROOT, "TTFT p50 %.0f ms, p99 %.0f ms, max %.0f ms%n%n", percentile(bySpeed, 50), percentile(bySpeed, 99),
                bySpeed.get(bySpeed.size() - 1).ttftMs()));

        out.append(String.format(Locale.ROOT, "%-20s %8s %10s %10s%n", "reason", "requests", "TTFT p50", "TTFT p99"));
        Map<String, List<Request>> byReason = group(bySpeed, r -> reason(r.decision()));
        byReason.forEach((reason, list) -> out.append(String.format(Locale.ROOT, "%-20s %8d %8.0fms %8.0fms%n", reason, list.size(),
                percentile(list, 50), percentile(list, 99))));

        affinityByClass(out, done);

        int worstCount = Math.max(1, (int) Math.ceil(bySpeed.size() * settings.worstPercent() / 100));
        List<Request> worst = bySpeed.subList(bySpeed.size() - worstCount, bySpeed.size());
        out.append(String.format(Locale.ROOT, "%nthe slowest %s %% (%d requests, TTFT >= %.0f ms):%n", trim(settings.worstPercent()), worstCount,
                worst.get(0).ttftMs()));
        out.append("  by reason: ").append(counts(worst, r -> reason(r.decision()))).append('\n');
        out.append("  by class:  ").append(counts(worst, r -> String.valueOf(r.decision().getPrefixClass()))).append('\n');
        out.append("  by engine: ").append(counts(worst, r -> r.decision().getEngineId())).append('\n');

        int shown = Math.min(settings.slowest(), bySpeed.size());
        if (shown > 0) {
            out.append(String.format(Locale.ROOT, "%nthe %d slowest:%n", shown));
            header(out);
            for (int i = bySpeed.size() - 1; i >= bySpeed.size() - shown; i--) {
                line(out, bySpeed.get(i), start);
            }
        }
        if (!Double.isNaN(settings.fromSeconds())) {
            out.append(String.format(Locale.ROOT, "%nevery request decided from %s s to %s s:%n", trim(settings.fromSeconds()), trim(settings.toSeconds())));
            header(out);
            for (Request r : done) {
                double at = (r.decision().getTsMs() - start) / 1000.0;
                if (at >= settings.fromSeconds() && at <= settings.toSeconds()) {
                    line(out, r, start);
                }
            }
            if (settings.engine() != null) {
                out.append(String.format(Locale.ROOT, "%n%s's load reports from %s s to %s s:%n%9s %8s %8s %10s%n", settings.engine(),
                        trim(settings.fromSeconds()), trim(settings.toSeconds()), "at s", "waiting", "running", "KV used"));
                for (EngineLoad l : loads) {
                    double at = (l.getTsMs() - start) / 1000.0;
                    if (settings.engine().equals(l.getEngineId()) && at >= settings.fromSeconds() && at <= settings.toSeconds()) {
                        out.append(String.format(Locale.ROOT, "%9.3f %8d %8d %9.1f%%%n", at, l.getWaiting(), l.getRunning(),
                                l.getKvBlocksCapacity() > 0 ? 100.0 * l.getKvBlocksUsed() / l.getKvBlocksCapacity() : Double.NaN));
                    }
                }
            }
        }
        return out.toString();
    }

    /**
     * Per class, what decided its placements: the prefill they saved (as the engines' cached tokens
     * showed it) against the wait they added, per request; and how many went to a holder. Balancers
     * that do not send the cost view leave their requests out.
     */
    private static void affinityByClass(StringBuilder out, List<Request> done) {
        Map<String, List<Request>> byClass = group(done.stream().filter(r -> r.decision().getSavedPrefillMs() != null
                && r.decision().getAddedWaitMs() != null).toList(), r -> String.valueOf(r.decision().getPrefixClass()));
        if (byClass.isEmpty()) {
            return;
        }
        out.append(String.format(Locale.ROOT, "%nwhat decided each class's placements (per request: prefill saved, as the engines' cached "
                + "tokens showed it, against the wait the placement added):%n%-16s %8s %10s %12s %12s %12s%n", "class", "requests",
                "to holder", "saved ms", "wait ms", "net ms"));
        byClass.forEach((c, list) -> {
            double saved = 0;
            double waited = 0;
            long toHolder = 0;
            for (Request r : list) {
                saved += savedMs(r);
                waited += Math.max(0, r.decision().getAddedWaitMs());
                toHolder += r.decision().getPredictedCachedBlocks() > 0 ? 1 : 0;
            }
            out.append(String.format(Locale.ROOT, "%-16s %8d %10d %12.1f %12.1f %+12.1f%n", c, list.size(), toHolder, saved / list.size(),
                    waited / list.size(), (saved - waited) / list.size()));
        });
    }

    /** What the request's placement saved, as its engine showed it; 0 without a cost view. */
    private static double savedMs(Request r) {
        RoutingDecision d = r.decision();
        RequestOutcome o = r.outcome();
        return d.getSavedPrefillMs() == null || o == null ? 0 : AffinityCost.realizedSavingMs(d.getSavedPrefillMs(),
                d.getPredictedCachedBlocks(), o.getCachedTokens(), ViewLayout.DEFAULT_CHUNK_TOKENS, o.getStatus() == OutcomeStatus.OK);
    }

    /** Every joined request as CSV, in decision order, for analysis elsewhere; times in epoch milliseconds. */
    public static String csv(List<Request> requests) {
        StringBuilder out = new StringBuilder("request_id,decided_ms,finished_ms,class,client,engine,reason,predicted_blocks,best_holder_blocks,"
                + "saved_prefill_ms,added_wait_ms,prompt_tokens,cached_tokens,queue_ms,ttft_ms,output_tokens,status\n");
        for (Request r : requests) {
            RoutingDecision d = r.decision();
            RequestOutcome o = r.outcome();
            out.append(String.format(Locale.ROOT, "%s,%d,%s,%s,%s,%s,%s,%d,%s,%s,%s,%s,%s,%s,%s,%s,%s%n", d.getRequestId(), d.getTsMs(),
                    o == null ? "" : o.getTsMs(), nullToEmpty(d.getPrefixClass()), nullToEmpty(d.getClientId()), d.getEngineId(), reason(d),
                    d.getPredictedCachedBlocks(), d.getBestHolderBlocks() == null ? "" : d.getBestHolderBlocks(),
                    d.getSavedPrefillMs() == null ? "" : d.getSavedPrefillMs(), d.getAddedWaitMs() == null ? "" : d.getAddedWaitMs(),
                    o == null ? "" : o.getPromptTokens(), o == null ? "" : o.getCachedTokens(), o == null ? "" : o.getQueueMs(),
                    o == null ? "" : o.getTtftMs(), o == null ? "" : o.getOutputTokens(), o == null ? "" : o.getStatus()));
        }
        return out.toString();
    }

    /** The finest reason the balancer gave: its own where finer than the family (reason_detail), else the family. */
    private static String reason(RoutingDecision d) {
        return d.getReasonDetail() != null ? d.getReasonDetail().toString() : d.getReason().name();
    }

    private static String nullToEmpty(CharSequence s) {
        return s == null ? "" : s.toString();
    }

    /** The nearest-rank percentile of a list sorted by TTFT. */
    static double percentile(List<Request> sortedByTtft, double p) {
        int rank = (int) Math.ceil(p / 100 * sortedByTtft.size());
        return sortedByTtft.get(Math.max(0, rank - 1)).ttftMs();
    }

    private static Map<String, List<Request>> group(List<Request> requests, Function<Request, String> key) {
        Map<String, List<Request>> groups = new TreeMap<>();
        for (Request r : requests) {
            groups.computeIfAbsent(key.apply(r), k -> new ArrayList<>()).add(r);
        }
        return groups;
    }

    /** "A 3, B 1", the largest first. */
    private static String counts(List<Request> requests, Function<Request, String> key) {
        List<Map.Entry<String, List<Request>>> groups = new ArrayList<>(group(requests, key).entrySet());
        groups.sort(Comparator.comparingInt((Map.Entry<String, List<Request>> e) -> -e.getValue().size()).thenComparing(Map.Entry::getKey));
        StringBuilder s = new StringBuilder();
        for (Map.Entry<String, List<Request>> g : groups) {
            s.append(s.length() == 0 ? "" : ", ").append(g.getKey()).append(' ').append(g.getValue().size());
        }
        return s.toString();
    }

    private static void header(StringBuilder out) {
        out.append(String.format(Locale.ROOT, "%9s %-12s %-14s %-10s %-18s %6s %6s %7s %7s %8s %8s %8s %8s%n", "at s", "class", "client", "engine",
                "reason", "blocks", "best", "prompt", "cached", "saved", "+wait", "queue", "TTFT"));
    }

    private static void line(StringBuilder out, Request r, long start) {
        RoutingDecision d = r.decision();
        RequestOutcome o = r.outcome();
        out.append(String.format(Locale.ROOT, "%9.3f %-12s %-14s %-10s %-18s %6d %6s %7d %7d %8s %8s %6.0fms %6.0fms%n",
                (d.getTsMs() - start) / 1000.0, String.valueOf(d.getPrefixClass()), String.valueOf(d.getClientId()), d.getEngineId(),
                reason(d), d.getPredictedCachedBlocks(), d.getBestHolderBlocks() == null ? "-" : d.getBestHolderBlocks().toString(),
                o.getPromptTokens(), o.getCachedTokens(), d.getSavedPrefillMs() == null ? "-" : String.format(Locale.ROOT, "%.0fms", savedMs(r)),
                d.getAddedWaitMs() == null ? "-" : String.format(Locale.ROOT, "%.0fms", d.getAddedWaitMs()), o.getQueueMs(), o.getTtftMs()));
    }

    private static String trim(double v) {
        return v == Math.rint(v) ? String.valueOf((long) v) : String.valueOf(v);
    }
}
