package dev.kvrouter.cli.demo;

import dev.kvrouter.metrics.ClassRatios;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * The four ratios per prefix class as a console table, with what affinity saved against the wait it
 * added per request: the operator's dashboard, in text.
 */
public final class RatiosTable {

    private static final String[] HEADER = {"class", "requests", "hit rate", "tokens/hit", "$/hit", "saved/req", "wait/req",
            "load Gini", "stale", "TTFT p50", "TTFT p99", "unmatched"};

    private RatiosTable() {}

    /** One row per class, busiest first; an empty collection gives the header and a waiting line. */
    public static String render(Collection<ClassRatios> latest) {
        List<String[]> rows = new ArrayList<>();
        rows.add(HEADER);
        latest.stream().sorted(Comparator.comparingLong(ClassRatios::getRequests).reversed()
                        .thenComparing(r -> r.getPrefixClass().toString()))
                .forEach(r -> rows.add(new String[] {
                        r.getPrefixClass().toString(),
                        Long.toString(r.getRequests()),
                        percent(r.getAffinityHitRate()),
                        String.format(Locale.ROOT, "%.0f", r.getAvoidedTokensPerHit()),
                        String.format(Locale.ROOT, "%.5f", r.getAvoidedUsdPerHit()),
                        // What decides affinity, per request: prefill saved against the wait it added (no cost view: -).
                        r.getCostKnown() == 0 ? "-" : String.format(Locale.ROOT, "%.0f ms", r.getSavedPrefillMsPerRequest()),
                        r.getCostKnown() == 0 ? "-" : String.format(Locale.ROOT, "%.0f ms", r.getAddedWaitMsPerRequest()),
                        String.format(Locale.ROOT, "%.2f", r.getLoadGini()),
                        r.getAffinityRouted() == 0 ? "-" : percent(r.getStalenessRatio()),
                        ms(r.getTtftP50Ms()),
                        ms(r.getTtftP99Ms()),
                        Long.toString(r.getUnmatchedDecisions() + r.getUnmatchedOutcomes())}));
        int[] width = new int[HEADER.length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                width[i] = Math.max(width[i], row[i].length());
            }
        }
        StringBuilder out = new StringBuilder();
        for (int r = 0; r < rows.size(); r++) {
            String[] row = rows.get(r);
            for (int i = 0; i < row.length; i++) {
                String cell = i == 0 ? pad(row[i], width[i], false) : pad(row[i], width[i], true);
                out.append(i == 0 ? "" : "  ").append(cell);
            }
            out.append('\n');
            if (r == 0) {
                int total = 0;
                for (int w : width) {
                    total += w;
                }
                out.append("-".repeat(total + 2 * (width.length - 1))).append('\n');
            }
        }
        if (rows.size() == 1) {
            out.append("(waiting for the first window of ratios)\n");
        }
        return out.toString();
    }

    private static String percent(double ratio) {
        return String.format(Locale.ROOT, "%.1f %%", ratio * 100);
    }

    private static String ms(Double v) {
        return v == null ? "-" : String.format(Locale.ROOT, "%.0f ms", v);
    }

    private static String pad(String s, int width, boolean right) {
        String fill = " ".repeat(width - s.length());
        return right ? fill + s : s + fill;
    }
}
