package dev.kvrouter.httpfleet;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** nginx names every upstream a request tried ("a, b"): the load counts the one that answered, and the CSV keeps the list whole. */
class LoadSummaryTest {

    private static LoadGenerator.Result answered(long seq, String upstream) {
        return new LoadGenerator.Result(seq, "chat", 200, 10, 20, 100, 50, upstream, "view");
    }

    @Test
    void aRetriedRequestCountsForTheUpstreamThatAnsweredIt() {
        assertThat(answered(1, "127.0.0.1:1, 127.0.0.1:2").answeredBy()).isEqualTo("127.0.0.1:2");
        assertThat(answered(2, "127.0.0.1:2").answeredBy()).isEqualTo("127.0.0.1:2");
        assertThat(answered(3, "").answeredBy()).isEmpty();
        // Two requests, both answered by :2 (one after a failed try on :1): all load on one upstream, no second bucket.
        LoadSummary all = LoadSummary.of(List.of(answered(1, "127.0.0.1:1, 127.0.0.1:2"), answered(2, "127.0.0.1:2"))).get(0);
        assertThat(all.upstreamGini()).isZero();
        LoadSummary spread = LoadSummary.of(List.of(answered(1, "127.0.0.1:1"), answered(2, "127.0.0.1:2"))).get(0);
        assertThat(spread.upstreamGini()).isZero();
        LoadSummary skewed = LoadSummary.of(List.of(answered(1, "127.0.0.1:1"), answered(2, "127.0.0.1:1"), answered(3, "127.0.0.1:1, 127.0.0.1:2")))
                .get(0);
        assertThat(skewed.upstreamGini()).isPositive();
    }

    @Test
    void aHeaderWithACommaIsOneQuotedCsvField() {
        assertThat(LoadCommand.csvField("127.0.0.1:1")).isEqualTo("127.0.0.1:1");
        assertThat(LoadCommand.csvField("load_only; redis_timeout")).isEqualTo("load_only; redis_timeout");
        assertThat(LoadCommand.csvField("127.0.0.1:1, 127.0.0.1:2")).isEqualTo("\"127.0.0.1:1, 127.0.0.1:2\"");
        assertThat(LoadCommand.csvField("a\"b,c")).isEqualTo("\"a\"\"b,c\"");
    }
}
