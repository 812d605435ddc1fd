package dev.kvrouter.contract;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * How a request trace spreads over Redis Cluster slots under the view's key layout, for several
 * tag depths: what share of all pick lookups and of all stored blocks the busiest slot takes.
 * A trace line is {@code {"hash_ids": [...]}} with chained block ids (the Mooncake format).
 */
public final class SlotSpread {

    /** Figures for one tag depth. */
    public record Result(int tagDepth, long requests, long lookups, double busiestLookupShare, long blocks,
                         double busiestBlockShare, int slotsUsed) {}

    private SlotSpread() {}

    public static Result measure(Path trace, int tagDepth, int limit) throws IOException {
        ObjectMapper json = new ObjectMapper();
        long[] lookupsPerSlot = new long[ClusterSlots.SLOTS];
        long[] blocksPerSlot = new long[ClusterSlots.SLOTS];
        Set<Long> seenBlocks = new HashSet<>();
        long requests = 0;
        long lookups = 0;
        try (BufferedReader in = Files.newBufferedReader(trace)) {
            String line;
            while ((line = in.readLine()) != null && requests < limit) {
                if (line.isBlank()) {
                    continue;
                }
                JsonNode ids = json.readTree(line).path("hash_ids");
                int n = ids.size();
                if (n == 0) {
                    continue;
                }
                long[] chain = new long[n];
                for (int i = 0; i < n; i++) {
                    // The trace's ids are already chained: equal prefixes have equal ids.
                    chain[i] = ids.get(i).asLong() * 0x9E3779B97F4A7C15L;
                }
                requests++;
                // A pick reads the group of block 1 and the group of blocks 2..n (one key when they coincide).
                Set<Integer> touched = new HashSet<>();
                touched.add(slot(chain, 1, tagDepth));
                if (n > 1) {
                    touched.add(slot(chain, 2, tagDepth));
                }
                for (int s : touched) {
                    lookupsPerSlot[s]++;
                    lookups++;
                }
                for (int p = 1; p <= n; p++) {
                    if (seenBlocks.add(chain[p - 1])) {
                        blocksPerSlot[slot(chain, p, tagDepth)]++;
                    }
                }
            }
        }
        int used = 0;
        long maxLookups = 0;
        long maxBlocks = 0;
        for (int s = 0; s < ClusterSlots.SLOTS; s++) {
            if (blocksPerSlot[s] > 0 || lookupsPerSlot[s] > 0) {
                used++;
            }
            maxLookups = Math.max(maxLookups, lookupsPerSlot[s]);
            maxBlocks = Math.max(maxBlocks, blocksPerSlot[s]);
        }
        return new Result(tagDepth, requests, lookups, (double) maxLookups / Math.max(1, lookups), seenBlocks.size(),
                (double) maxBlocks / Math.max(1, seenBlocks.size()), used);
    }

    private static int slot(long[] chain, int position, int tagDepth) {
        return ClusterSlots.slot("kvr:g:{" + ViewLayout.hex(ViewLayout.tag(chain, position, tagDepth)) + "}");
    }

    public static void report(Path trace, List<Integer> depths, int limit, PrintStream out) throws IOException {
        out.printf("slot spread of %s (%d slots; a pick reads the group of block 1 and of blocks 2..n)%n", trace, ClusterSlots.SLOTS);
        out.printf("%-9s %9s %9s %22s %9s %21s %10s%n", "tag depth", "requests", "lookups", "busiest slot, lookups",
                "blocks", "busiest slot, blocks", "slots used");
        for (int d : depths) {
            Result r = measure(trace, d, limit);
            out.printf("%-9d %9d %9d %21.2f%% %9d %20.2f%% %10d%n", r.tagDepth(), r.requests(), r.lookups(),
                    100 * r.busiestLookupShare(), r.blocks(), 100 * r.busiestBlockShare(), r.slotsUsed());
        }
    }
}
