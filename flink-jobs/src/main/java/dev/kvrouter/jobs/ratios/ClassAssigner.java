package dev.kvrouter.jobs.ratios;

import dev.kvrouter.jobs.policy.PrefixPopularity;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Gives every request its prefix class: the balancer's label when it sent one, else hot, warm or
 * one-shot by how often its first block was seen (a bounded Space-Saving sketch). Runs at
 * parallelism 1 so the sketch sees every prefix; the sketch lives in memory and is rebuilt after a
 * restart (popularity is an estimate, and a fresh one converges within minutes of traffic).
 */
public final class ClassAssigner extends ProcessFunction<JoinedRequest, JoinedRequest> {

    /** Outcomes with no decision carry no label and no prefix. */
    public static final String UNKNOWN = "unknown";

    private final int capacity;
    private final long hotAt;
    private final long warmAt;
    private transient PrefixPopularity popularity;

    public ClassAssigner(int capacity, long hotAt, long warmAt) {
        this.capacity = capacity;
        this.hotAt = hotAt;
        this.warmAt = warmAt;
    }

    @Override
    public void open(OpenContext openContext) {
        popularity = new PrefixPopularity(capacity);
    }

    @Override
    public void processElement(JoinedRequest r, Context ctx, Collector<JoinedRequest> out) {
        if (r.prefixClass == null || r.prefixClass.isBlank()) {
            if (r.unmatched == JoinedRequest.OUTCOME_ONLY || r.rootBlock == 0) {
                r.prefixClass = UNKNOWN;
            } else {
                popularity.add(r.rootBlock);
                r.prefixClass = switch (popularity.classify(r.rootBlock, hotAt, warmAt)) {
                    case HOT -> "hot";
                    case WARM -> "warm";
                    case ONE_SHOT -> "one-shot";
                };
            }
        }
        out.collect(r);
    }
}
