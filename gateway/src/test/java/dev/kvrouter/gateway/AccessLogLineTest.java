package dev.kvrouter.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvrouter.events.OutcomeStatus;
import dev.kvrouter.events.RouteReason;
import java.util.List;
import org.junit.jupiter.api.Test;

class AccessLogLineTest {

    private static final String VIEW_LINE = "{\"request_id\":\"r1\",\"end_s\":\"1700000000.500\",\"client\":\"tenant-7\",\"class\":\"rag\","
            + "\"engine\":\"e2\",\"route\":\"view\",\"reason\":\"AFFINITY\",\"predicted_blocks\":\"2\",\"best_holder_blocks\":\"2\","
            + "\"saved_prefill_ms\":\"40.0\",\"added_wait_ms\":\"0.0\",\"status\":\"200\",\"upstream_status\":\"200\","
            + "\"upstream\":\"127.0.0.1:9002\",\"ttft_ms\":\"12.5\",\"prompt_tokens\":\"9\",\"cached_tokens\":\"8\",\"output_tokens\":\"5\","
            + "\"request_s\":\"0.250\",\"blocks\":\"d9809f839fb75355894ff30f2ca485c7\"}";

    @Test
    void aLineRoutedByTheViewIsItsDecisionAndTheOutcomeTheEngineReported() {
        AccessLogLine line = AccessLogLine.parse(VIEW_LINE, "m");
        assertThat(line.decision().getRequestId()).isEqualTo("r1");
        assertThat(line.decision().getEngineId()).isEqualTo("e2");
        assertThat(line.decision().getReason()).isEqualTo(RouteReason.AFFINITY);
        assertThat(line.decision().getReasonDetail()).as("AFFINITY says it all").isNull();
        assertThat(line.decision().getClientId()).isEqualTo("tenant-7");
        assertThat(line.decision().getPrefixClass()).isEqualTo("rag");
        assertThat(line.decision().getTsMs()).as("when it was decided: the end less the request's time").isEqualTo(1_700_000_000_250L);
        assertThat(line.decision().getPromptBlockHashes()).containsExactly(0xd9809f839fb75355L, 0x894ff30f2ca485c7L);
        assertThat(line.decision().getSavedPrefillMs()).isEqualTo(40.0);
        assertThat(line.outcome().getCachedTokens()).isEqualTo(8);
        assertThat(line.outcome().getPromptTokens()).isEqualTo(9);
        assertThat(line.outcome().getTtftMs()).isEqualTo(12.5);
        assertThat(line.outcome().getStatus()).isEqualTo(OutcomeStatus.OK);
        assertThat(line.outcome().getTsMs()).isEqualTo(1_700_000_000_500L);
    }

    @Test
    void aLineRoutedOnLoadAloneIsAFallbackAndWithoutTheEnginesUsageHasNoOutcome() {
        String loadOnly = VIEW_LINE.replace("\"route\":\"view\",\"reason\":\"AFFINITY\"", "\"route\":\"load_only\",\"reason\":\"text\"")
                .replace("\"prompt_tokens\":\"9\"", "\"prompt_tokens\":\"\"").replace("\"blocks\":\"d9809f839fb75355894ff30f2ca485c7\"", "\"blocks\":\"\"");
        AccessLogLine line = AccessLogLine.parse(loadOnly, "m");
        assertThat(line.decision().getReason()).isEqualTo(RouteReason.FALLBACK_LOAD_ONLY);
        assertThat(line.decision().getReasonDetail()).as("why the gateway did not use the view").isEqualTo("text");
        assertThat(line.decision().getSavedPrefillMs()).isNull();
        assertThat(line.decision().getPromptBlockHashes()).isEmpty();
        assertThat(line.outcome()).as("no usage: a hit cannot be told from a miss").isNull();
    }

    @Test
    void aFinerReasonOfTheLibraryIsCarriedAsItsFamilyAndItself() {
        AccessLogLine queued = AccessLogLine.parse(VIEW_LINE.replace("\"reason\":\"AFFINITY\"", "\"reason\":\"SPILL_QUEUE\""), "m");
        assertThat(queued.decision().getReason()).isEqualTo(RouteReason.SPILL_BUSY);
        assertThat(queued.decision().getReasonDetail()).isEqualTo("SPILL_QUEUE");
        AccessLogLine later = AccessLogLine.parse(VIEW_LINE.replace("\"reason\":\"AFFINITY\"", "\"reason\":\"SPILL_NEXT_YEAR\""), "m");
        assertThat(later.decision().getReason()).as("a later library's reason").isEqualTo(RouteReason.UNKNOWN);
        assertThat(later.decision().getReasonDetail()).isEqualTo("SPILL_NEXT_YEAR");
    }

    @Test
    void aClientThatWentAwayIsCancelledAndAnEngineErrorIsAnError() {
        assertThat(AccessLogLine.parse(VIEW_LINE.replace("\"status\":\"200\"", "\"status\":\"499\""), "m").outcome().getStatus())
                .isEqualTo(OutcomeStatus.CANCELLED);
        assertThat(AccessLogLine.parse(VIEW_LINE.replace("\"status\":\"200\"", "\"status\":\"502\""), "m").outcome().getStatus())
                .isEqualTo(OutcomeStatus.ERROR);
    }

    @Test
    void whatCannotBeReadSaysWhy() {
        assertThatThrownBy(() -> AccessLogLine.parse("127.0.0.1 - - [04/Dec/2026] \"GET /\" 200", "m")).hasMessageStartingWith("not JSON");
        assertThatThrownBy(() -> AccessLogLine.parse("{\"request_id\":\"r1\"}", "m")).hasMessageContaining("no request_id or engine");
        assertThatThrownBy(() -> AccessLogLine.parse(VIEW_LINE.replace("\"ttft_ms\":\"12.5\"", "\"ttft_ms\":\"soon\""), "m"))
                .hasMessage("ttft_ms is not a number: 'soon'");
        assertThatThrownBy(() -> AccessLogLine.hashes("abc")).hasMessageContaining("not a multiple of 16");
        assertThat(AccessLogLine.hashes("ffffffffffffffff")).isEqualTo(List.of(-1L));
    }
}
