package dev.kvrouter.sim.workload;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * Replays a Mooncake trace ({@code {"timestamp", "input_length", "output_length", "hash_ids"}} per
 * line; hash ids are chained 512-token blocks). Tokens are synthesised from (hash id, position), so
 * equal hash-id prefixes give equal token prefixes and one trace block becomes 32 engine blocks of
 * 16 tokens. Arrivals are divided by {@code compression}. The trace carries no labels: every
 * request is class {@code conversation}, client unknown.
 */
public final class TraceWorkload implements Workload {

    /** Tokens per trace block (Mooncake's hash_ids). */
    public static final int TRACE_BLOCK_TOKENS = 512;

    /** One line of the trace. */
    public record Entry(long timestampMs, int inputLength, int outputLength, long[] hashIds) {}

    private final Path file;
    private final double compression;
    private final List<Entry> entries;

    public TraceWorkload(Path file, double compression) {
        if (compression <= 0) {
            throw new IllegalArgumentException("compression must be positive, was " + compression);
        }
        this.file = file;
        this.compression = compression;
        this.entries = read(file);
    }

    public static List<Entry> read(Path file) {
        ObjectMapper json = new ObjectMapper();
        List<Entry> out = new ArrayList<>();
        try (BufferedReader in = open(file)) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                JsonNode n = json.readTree(line);
                JsonNode ids = n.get("hash_ids");
                long[] hashIds = new long[ids.size()];
                for (int i = 0; i < hashIds.length; i++) {
                    hashIds[i] = ids.get(i).asLong();
                }
                out.add(new Entry(n.get("timestamp").asLong(), n.get("input_length").asInt(), n.get("output_length").asInt(), hashIds));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read trace " + file, e);
        }
        return out;
    }

    /** The file as text; gzipped when its name ends in .gz (traces usually travel compressed). */
    private static BufferedReader open(Path file) throws IOException {
        if (!file.getFileName().toString().endsWith(".gz")) {
            return Files.newBufferedReader(file);
        }
        return new BufferedReader(new java.io.InputStreamReader(new java.util.zip.GZIPInputStream(Files.newInputStream(file)),
                java.nio.charset.StandardCharsets.UTF_8));
    }

    public List<Entry> entries() {
        return entries;
    }

    public int size() {
        return entries.size();
    }

    @Override
    public String name() {
        return String.format(Locale.ROOT, "trace %s (%d requests, compression %s)", file.getFileName(), entries.size(), compression);
    }

    @Override
    public Iterator<SimRequest> requests() {
        return new Iterator<>() {
            int next;

            @Override
            public boolean hasNext() {
                return next < entries.size();
            }

            @Override
            public SimRequest next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                Entry e = entries.get(next);
                SimRequest r = new SimRequest(next, e.timestampMs() / compression, "conversation", null, prompt(e), Math.max(1, e.outputLength()));
                next++;
                return r;
            }
        };
    }

    /** The prompt of a trace line: one segment per hash id, the last one cut to the input length. */
    public static Prompt prompt(Entry e) {
        List<Prompt.Segment> segments = new ArrayList<>(e.hashIds().length);
        int left = e.inputLength();
        for (long id : e.hashIds()) {
            int len = Math.min(TRACE_BLOCK_TOKENS, left);
            segments.add(new Prompt.Segment(0x5EED_0000_0000L ^ id * 0x9E3779B97F4A7C15L, len));
            left -= len;
        }
        return new Prompt(segments);
    }

    /**
     * The same bound in engine blocks of {@code blockTokens} tokens over each prompt's full blocks:
     * the unit of the simulator's block hit rate. A partial last trace block holds only its full
     * engine blocks, and matches as far as an earlier prompt with the same hash id held them.
     */
    public static double unboundedEngineBlockHitRate(List<Entry> entries, int blockTokens) {
        if (TRACE_BLOCK_TOKENS % blockTokens != 0) {
            throw new IllegalArgumentException("engine blocks must divide the trace's 512-token blocks, not " + blockTokens);
        }
        java.util.Map<Long, Integer> seenBlocks = new java.util.HashMap<>();
        long hits = 0;
        long total = 0;
        for (Entry e : entries) {
            long[] ids = e.hashIds();
            boolean matching = true;
            for (int j = 0; j < ids.length; j++) {
                int blocks = Math.min(TRACE_BLOCK_TOKENS, e.inputLength() - j * TRACE_BLOCK_TOKENS) / blockTokens;
                if (matching) {
                    int hit = Math.min(blocks, seenBlocks.getOrDefault(ids[j], 0));
                    hits += hit;
                    matching = hit == blocks;
                }
                total += blocks;
            }
            for (int j = 0; j < ids.length; j++) {
                int blocks = Math.min(TRACE_BLOCK_TOKENS, e.inputLength() - j * TRACE_BLOCK_TOKENS) / blockTokens;
                seenBlocks.merge(ids[j], blocks, Math::max);
            }
        }
        return total == 0 ? 0 : (double) hits / total;
    }

    /**
     * The best any router could do: each request's leading trace blocks already seen by any earlier
     * request, over all trace blocks, with an unbounded cache (consecutive prefix match).
     */
    public static double unboundedPrefixHitRate(List<Entry> entries) {
        Set<Long> seen = new HashSet<>();
        long hits = 0;
        long total = 0;
        for (Entry e : entries) {
            long[] ids = e.hashIds();
            int k = 0;
            while (k < ids.length && seen.contains(ids[k])) {
                k++;
            }
            hits += k;
            total += ids.length;
            for (long id : ids) {
                seen.add(id);
            }
        }
        return total == 0 ? 0 : (double) hits / total;
    }
}
