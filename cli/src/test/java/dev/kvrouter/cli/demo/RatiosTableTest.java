package dev.kvrouter.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.metrics.ClassRatios;
import dev.kvrouter.metrics.WindowKind;
import java.util.List;
import org.junit.jupiter.api.Test;

class RatiosTableTest {

    private static ClassRatios ratios(String cls, long requests, double hitRate, long routed, Double p50) {
        return ClassRatios.newBuilder().setPrefixClass(cls).setWindowKind(WindowKind.TUMBLING).setWindowStartMs(0)
                .setWindowEndMs(60_000).setRequests(requests).setAffinityHits((long) (requests * hitRate))
                .setAffinityHitRate(hitRate).setAvoidedTokensPerHit(1536).setAvoidedUsdPerHit(0.0046)
                .setLoadGini(0.123).setAffinityRouted(routed).setStale(routed / 4).setStalenessRatio(routed == 0 ? 0 : 0.25)
                .setTtftP50Ms(p50).setTtftP99Ms(p50 == null ? null : p50 * 3).setUnmatchedDecisions(1).setUnmatchedOutcomes(2)
                .build();
    }

    @Test
    void busiestClassFirstAlignedWithEveryFigure() {
        ClassRatios appA = ClassRatios.newBuilder(ratios("app-a", 340, 0.8125, 200, 41.6)).setCostKnown(340).setSavedPrefillMsPerRequest(123.4)
                .setAddedWaitMsPerRequest(7.6).build();
        String table = RatiosTable.render(List.of(ratios("one-shot", 12, 0.0, 0, null), appA));
        List<String> lines = table.lines().toList();
        assertThat(lines).hasSize(4);
        assertThat(lines.get(0)).startsWith("class").contains("hit rate", "saved/req", "wait/req", "load Gini", "TTFT p99");
        assertThat(lines.get(1)).matches("-+");
        assertThat(lines.get(2)).startsWith("app-a").contains("340", "81.3 %", "1536", "0.00460", "123 ms", "8 ms", "0.12", "25.0 %", "42 ms",
                "125 ms", "3");
        assertThat(lines.get(3)).startsWith("one-shot").contains("0.0 %").endsWith("3");
        assertThat(lines.get(3)).as("no affinity-routed requests: no staleness, no TTFT, no cost view").contains(" - ");
        assertThat(lines.stream().map(String::length).distinct()).as("columns aligned").hasSize(1);
    }

    @Test
    void noRatiosYetSaysSo() {
        assertThat(RatiosTable.render(List.of())).endsWith("(waiting for the first window of ratios)\n");
    }
}
