package dev.kvrouter.sim.workload;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class SyntheticWorkloadTest {

    private static List<SimRequest> generate(String kind, long seed) {
        return new SyntheticWorkload(kind, SyntheticWorkload.Settings.defaults(300, seed)).generate();
    }

    @Test
    void everyKindIsDeterministicPerSeedAndDiffersAcrossSeeds() {
        for (String kind : SyntheticWorkload.KINDS) {
            List<SimRequest> a = generate(kind, 7);
            List<SimRequest> b = generate(kind, 7);
            assertThat(a).as(kind).isNotEmpty().hasSameSizeAs(b);
            for (int i = 0; i < a.size(); i++) {
                assertThat(a.get(i).arrivalMs()).isEqualTo(b.get(i).arrivalMs());
                assertThat(a.get(i).prompt().tokens()).isEqualTo(b.get(i).prompt().tokens());
                assertThat(a.get(i).clientId()).isEqualTo(b.get(i).clientId());
            }
            List<SimRequest> other = generate(kind, 8);
            assertThat(Arrays.equals(other.get(0).prompt().tokens(), a.get(0).prompt().tokens())).as(kind).isFalse();
        }
    }

    @Test
    void longContextIsThousandsOfLongSessionsWhoseOnlyReuseIsTheirOwnNextTurn() {
        List<SimRequest> all = new SyntheticWorkload("long-context", SyntheticWorkload.Settings.defaults(600, 3)).generate();
        Map<String, List<SimRequest>> sessions = all.stream().collect(Collectors.groupingBy(SimRequest::clientId));
        assertThat(sessions.size()).as("thousands of sessions in ten minutes").isGreaterThan(1_000);
        assertThat(all).allSatisfy(r -> {
            assertThat(r.requestClass()).isEqualTo("long-context");
            assertThat(r.promptTokens()).isBetween(8_000, 34_000);
        });
        long distinctFirstSegments = all.stream().map(r -> r.prompt().segments().get(0).seed()).distinct().count();
        assertThat(distinctFirstSegments).as("one document per session: most first blocks distinct").isEqualTo(sessions.size());
        for (List<SimRequest> turns : sessions.values()) {
            for (int i = 1; i < turns.size(); i++) {
                List<dev.kvrouter.sim.workload.Prompt.Segment> before = turns.get(i - 1).prompt().segments();
                assertThat(turns.get(i).prompt().segments().subList(0, before.size())).as("a turn extends the one before")
                        .isEqualTo(before);
            }
        }
    }

    @Test
    void longPrefixIsConversationsSharingAFewLongDocumentsByZipfPopularity() {
        List<SimRequest> all = new SyntheticWorkload("long-prefix", SyntheticWorkload.Settings.defaults(600, 3)).generate();
        assertThat(all).allSatisfy(r -> {
            assertThat(r.requestClass()).isEqualTo("long-prefix");
            assertThat(r.promptTokens()).isBetween(10_100, 44_000);
        });
        Map<Long, Long> perDocument = all.stream().collect(Collectors.groupingBy(r -> r.prompt().segments().get(0).seed(), Collectors.counting()));
        assertThat(perDocument.size()).as("a head of popular documents and a long tail of 400").isBetween(100, 400);
        List<Long> counts = perDocument.values().stream().sorted((x, y) -> Long.compare(y, x)).toList();
        // Zipf 1.0 over 400 documents: the most read takes about 15 % of the conversations, the top 40 about two thirds.
        assertThat(counts.get(0) / (double) all.size()).isBetween(0.08, 0.25);
        assertThat(counts.subList(0, 40).stream().mapToLong(Long::longValue).sum() / (double) all.size()).isBetween(0.5, 0.8);
        assertThat(all.stream().map(r -> r.prompt().segments().get(0)).allMatch(d -> d.length() >= 10_000 && d.length() <= 40_000)).isTrue();
        Map<String, List<SimRequest>> sessions = all.stream().collect(Collectors.groupingBy(SimRequest::clientId));
        assertThat(sessions.size()).as("0.8 conversations a second").isBetween(400, 560);
        for (List<SimRequest> turns : sessions.values()) {
            for (int i = 1; i < turns.size(); i++) {
                List<Prompt.Segment> before = turns.get(i - 1).prompt().segments();
                assertThat(turns.get(i).prompt().segments().subList(0, before.size())).as("a turn extends the one before").isEqualTo(before);
            }
        }
        // Each conversation's first question is its own: only the document is shared.
        assertThat(sessions.values().stream().map(t -> t.get(0).prompt().segments().get(1).seed()).distinct().count()).isEqualTo(sessions.size());
    }

    @Test
    void arrivalsAreOrderedAndNumbered() {
        List<SimRequest> all = generate("mixed", 1);
        for (int i = 0; i < all.size(); i++) {
            assertThat(all.get(i).seq()).isEqualTo(i);
            if (i > 0) {
                assertThat(all.get(i).arrivalMs()).isGreaterThanOrEqualTo(all.get(i - 1).arrivalMs());
            }
        }
        assertThat(all).extracting(SimRequest::requestClass).containsOnly("system-prompt", "chat", "one-shot", "burst");
    }

    @Test
    void systemPromptsAreZipfPopularAndShareTheAppPrefix() {
        List<SimRequest> reqs = generate("system-prompt", 1);
        assertThat(reqs.size()).isBetween(1_600, 2_000); // 6 rps × 300 s
        Map<Long, Long> perApp = reqs.stream().collect(Collectors.groupingBy(r -> r.prompt().segments().get(0).seed(), Collectors.counting()));
        assertThat(perApp).hasSize(8);
        List<Long> counts = perApp.values().stream().sorted((x, y) -> Long.compare(y, x)).toList();
        // Zipf 1.1 over 8 apps: the top app takes about 35 %, the last about 4 %.
        assertThat(counts.get(0) / (double) reqs.size()).isBetween(0.30, 0.42);
        assertThat(counts.get(7) / (double) reqs.size()).isBetween(0.02, 0.07);
        // Each request: the app's prompt plus a suffix of its own.
        assertThat(reqs).allSatisfy(r -> assertThat(r.prompt().segments()).hasSize(2));
        assertThat(reqs.stream().map(r -> r.prompt().segments().get(1).seed()).distinct().count()).isEqualTo(reqs.size());
    }

    @Test
    void chatTurnsExtendThePreviousTurn() {
        List<SimRequest> reqs = generate("chat", 1);
        Map<String, List<SimRequest>> sessions = reqs.stream().collect(Collectors.groupingBy(SimRequest::clientId));
        assertThat(sessions.size()).isBetween(90, 150); // 0.4 sessions/s × 300 s
        for (List<SimRequest> turns : sessions.values()) {
            for (int t = 1; t < turns.size(); t++) {
                int[] prev = turns.get(t - 1).prompt().tokens();
                int[] next = turns.get(t).prompt().tokens();
                assertThat(next.length).isGreaterThan(prev.length + turns.get(t - 1).outputTokens());
                assertThat(Arrays.copyOf(next, prev.length)).isEqualTo(prev);
                assertThat(turns.get(t).arrivalMs()).isGreaterThan(turns.get(t - 1).arrivalMs());
            }
        }
    }

    @Test
    void oneShotsShareNothingAndTheBurstIsOneClientOnOnePrompt() {
        List<SimRequest> oneShots = generate("one-shot", 1);
        assertThat(oneShots.stream().map(r -> r.prompt().segments().get(0).seed()).distinct().count()).isEqualTo(oneShots.size());

        List<SimRequest> burst = generate("burst", 1);
        assertThat(burst).hasSize(300).allSatisfy(r -> {
            assertThat(r.clientId()).isEqualTo("burst-client");
            assertThat(r.arrivalMs()).isBetween(150_000.0, 160_000.0);
        });
        assertThat(burst.stream().map(r -> r.prompt().segments().get(0)).distinct()).hasSize(1);
    }

    @Test
    void zipfHelpers() {
        double[] cdf = SyntheticWorkload.zipfCdf(3, 1.0);
        // 1, 1/2, 1/3 over 11/6
        assertThat(cdf[0]).isCloseTo(6.0 / 11, org.assertj.core.data.Offset.offset(1e-12));
        assertThat(cdf[1]).isCloseTo(9.0 / 11, org.assertj.core.data.Offset.offset(1e-12));
        assertThat(cdf[2]).isEqualTo(1.0);
        assertThat(SyntheticWorkload.sample(cdf, 0.0)).isZero();
        assertThat(SyntheticWorkload.sample(cdf, 0.6)).isEqualTo(1);
        assertThat(SyntheticWorkload.sample(cdf, 0.99)).isEqualTo(2);
    }
}
