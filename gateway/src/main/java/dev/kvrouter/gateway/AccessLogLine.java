package dev.kvrouter.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kvrouter.events.OutcomeStatus;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RouteReason;
import dev.kvrouter.events.RoutingDecision;
import dev.kvrouter.schemas.RouteReasons;
import java.util.ArrayList;
import java.util.List;

/**
 * One line of the gateway's access log ({@code log_format kvr} in nginx.conf.template) as the
 * records the simulator's balancers publish: the decision always, the outcome when the engine
 * reported its usage (block hits count from the engine's cached tokens, never from the view's
 * prediction; a request whose engine reported none has no outcome).
 *
 * @param decision what placed the request
 * @param outcome  how it ended on the engine, or null
 */
public record AccessLogLine(RoutingDecision decision, RequestOutcome outcome) {

    /** The most block hashes a decision carries (the schema allows a prefix): 16 384 blocks, ~160 KiB. */
    public static final int MAX_HASHES = 16_384;
    private static final ObjectMapper JSON = new ObjectMapper();

    /** @throws IllegalArgumentException with what is wrong with the line */
    public static AccessLogLine parse(String line, String model) {
        JsonNode n;
        try {
            n = JSON.readTree(line);
        } catch (Exception e) {
            throw new IllegalArgumentException("not JSON: " + e.getMessage());
        }
        if (n == null || !n.isObject()) {
            throw new IllegalArgumentException("not a JSON object");
        }
        String requestId = text(n, "request_id");
        String engine = text(n, "engine");
        if (requestId.isEmpty() || engine.isEmpty()) {
            throw new IllegalArgumentException("no request_id or engine (a line of another log format?)");
        }
        double endSeconds = number(n, "end_s", Double.NaN);
        double requestSeconds = number(n, "request_s", 0);
        if (Double.isNaN(endSeconds)) {
            throw new IllegalArgumentException("no end_s ($msec)");
        }
        long endMs = Math.round(endSeconds * 1000);
        boolean viewRoute = "view".equals(text(n, "route"));
        // A view route logs the library's reason (carried as its family, and itself where finer); a route on load
        // alone logs why the gateway did not use the view (no_view, redis_timeout, no_prompt, ...).
        String said = emptyToNull(text(n, "reason"));
        RouteReason reason = viewRoute ? RouteReasons.of(said) : RouteReason.FALLBACK_LOAD_ONLY;
        RoutingDecision decision = RoutingDecision.newBuilder()
                .setRequestId(requestId)
                .setClientId(emptyToNull(text(n, "client")))
                .setPrefixClass(emptyToNull(text(n, "class")))
                .setModel(model)
                .setEngineId(engine)
                .setPredictedCachedBlocks((int) number(n, "predicted_blocks", 0))
                .setReason(reason)
                .setReasonDetail(viewRoute ? RouteReasons.detail(said) : said)
                .setViewAgeMs(null)
                .setTsMs(endMs - Math.round(requestSeconds * 1000))
                .setPromptBlockHashes(hashes(text(n, "blocks")))
                .setBestHolderBlocks(viewRoute ? (int) number(n, "best_holder_blocks", 0) : null)
                .setSavedPrefillMs(viewRoute ? number(n, "saved_prefill_ms", 0) : null)
                .setAddedWaitMs(viewRoute ? number(n, "added_wait_ms", 0) : null)
                .build();
        RequestOutcome outcome = null;
        double promptTokens = number(n, "prompt_tokens", Double.NaN);
        if (!Double.isNaN(promptTokens)) {
            outcome = RequestOutcome.newBuilder()
                    .setRequestId(requestId)
                    .setEngineId(engine)
                    .setPromptTokens((int) promptTokens)
                    .setCachedTokens((int) number(n, "cached_tokens", 0))
                    .setTransferredTokens(0)
                    .setQueueMs(0) // (the engine's own queue time is not in its answer)
                    .setTtftMs(number(n, "ttft_ms", 0))
                    .setOutputTokens((int) number(n, "output_tokens", 0))
                    .setStatus(status((int) number(n, "status", 0)))
                    .setTsMs(endMs)
                    .build();
        }
        return new AccessLogLine(decision, outcome);
    }

    private static String text(JsonNode n, String field) {
        JsonNode v = n.get(field);
        return v == null || v.isNull() ? "" : v.asText();
    }

    /** nginx writes every field as a string; "" and "-" are absent. */
    private static double number(JsonNode n, String field, double absent) {
        String v = text(n, field);
        if (v.isEmpty() || v.equals("-")) {
            return absent;
        }
        try {
            return Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(field + " is not a number: '" + v + "'");
        }
    }

    private static String emptyToNull(String s) {
        return s.isEmpty() ? null : s;
    }

    private static OutcomeStatus status(int http) {
        if (http >= 200 && http < 300) {
            return OutcomeStatus.OK;
        }
        if (http == 499) {
            return OutcomeStatus.CANCELLED; // nginx: the client closed the connection
        }
        if (http == 429 || http == 503) {
            return OutcomeStatus.REJECTED;
        }
        return http == 0 ? OutcomeStatus.UNKNOWN : OutcomeStatus.ERROR;
    }

    /** The packed hex of the access log (16 digits a block), at most MAX_HASHES of them. */
    static List<Long> hashes(String packed) {
        if (packed.length() % 16 != 0) {
            throw new IllegalArgumentException("blocks: " + packed.length() + " hex digits, not a multiple of 16");
        }
        int n = Math.min(packed.length() / 16, MAX_HASHES);
        List<Long> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            try {
                out.add(Long.parseUnsignedLong(packed, 16 * i, 16 * i + 16, 16));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("blocks: not hex at block " + i);
            }
        }
        return out;
    }
}
