package dev.kvrouter.sim.workload;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.blocks.CanonicalBlockHasher;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TraceWorkloadTest {

    /** The trace, vendored gzipped (src/test/resources/traces/README.md). */
    static final Path MOONCAKE = Path.of("src/test/resources/traces/mooncake-conversation.jsonl.gz");

    @Test
    void theVendoredTraceIsTheMooncakeTraceByteForByte() throws Exception {
        java.security.MessageDigest sha = java.security.MessageDigest.getInstance("SHA-256");
        try (var in = new java.util.zip.GZIPInputStream(Files.newInputStream(MOONCAKE))) {
            sha.update(in.readAllBytes());
        }
        assertThat(java.util.HexFormat.of().formatHex(sha.digest()))
                .isEqualTo("b8cbb061a85206d729d91cdc2981f43c9e0d99209dce588d3af5f7934408b9df");
    }

    @Test
    void theMooncakeUnboundedPrefixHitRateIsAbout366Permille() {
        List<TraceWorkload.Entry> entries = TraceWorkload.read(MOONCAKE);
        assertThat(entries).hasSize(12_031);
        double bound = TraceWorkload.unboundedPrefixHitRate(entries);
        assertThat(bound).isCloseTo(0.366, Offset.offset(0.001));
        // In 16-token engine blocks over full blocks (a partial last trace block no longer counts whole): 37.4 %.
        assertThat(TraceWorkload.unboundedEngineBlockHitRate(entries, 16)).isCloseTo(0.374, Offset.offset(0.001));
        assertThat(entries.get(entries.size() - 1).timestampMs() / 60_000.0).isBetween(58.0, 60.0);
    }

    @Test
    void equalHashIdPrefixesGiveEqualTokenPrefixesAnd32EngineBlocksPerTraceBlock(@TempDir Path dir) throws Exception {
        Path trace = dir.resolve("t.jsonl");
        Files.writeString(trace, """
                {"timestamp": 0, "input_length": 1100, "output_length": 10, "hash_ids": [1, 2, 3]}
                {"timestamp": 1000, "input_length": 1024, "output_length": 5, "hash_ids": [1, 2]}
                {"timestamp": 4000, "input_length": 600, "output_length": 5, "hash_ids": [1, 9]}
                """);
        TraceWorkload w = new TraceWorkload(trace, 2.0);
        List<SimRequest> reqs = new java.util.ArrayList<>();
        w.requests().forEachRemaining(reqs::add);
        assertThat(reqs).extracting(SimRequest::arrivalMs).containsExactly(0.0, 500.0, 2000.0);
        assertThat(reqs).extracting(SimRequest::promptTokens).containsExactly(1100, 1024, 600);
        assertThat(reqs).extracting(SimRequest::requestClass).containsOnly("conversation");

        int[] a = reqs.get(0).prompt().tokens();
        int[] b = reqs.get(1).prompt().tokens();
        int[] c = reqs.get(2).prompt().tokens();
        assertThat(Arrays.copyOf(a, 1024)).isEqualTo(b);
        assertThat(Arrays.copyOf(c, 512)).isEqualTo(Arrays.copyOf(a, 512));
        assertThat(c[512]).isNotEqualTo(a[512]);

        CanonicalBlockHasher hasher = new CanonicalBlockHasher(16);
        long[] ca = hasher.chain("m", null, a, null);
        long[] cb = hasher.chain("m", null, b, null);
        long[] cc = hasher.chain("m", null, c, null);
        assertThat(cb).hasSize(64).isEqualTo(Arrays.copyOf(ca, 64));
        assertThat(ca).hasSize(68); // 1100 / 16, the partial block left out
        int common = 0;
        while (common < cc.length && cc[common] == ca[common]) {
            common++;
        }
        assertThat(common).isEqualTo(32); // one shared trace block = 32 engine blocks
        assertThat(TraceWorkload.unboundedPrefixHitRate(w.entries())).isCloseTo((2 + 1) / 7.0, Offset.offset(1e-12));
        // Engine blocks: 32 + 32 + 4, then 32 + 32 all seen, then 32 seen + 5 new.
        assertThat(TraceWorkload.unboundedEngineBlockHitRate(w.entries(), 16)).isCloseTo(96 / 169.0, Offset.offset(1e-12));
    }
}
