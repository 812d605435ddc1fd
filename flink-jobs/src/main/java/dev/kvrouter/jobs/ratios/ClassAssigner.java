package dev.kvrouter.jobs.ratios;

import dev.kvrouter.jobs.io.HotPrefix;
import dev.kvrouter.jobs.policy.PrefixPopularity;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Gives every request its prefix class: the balancer's label when it sent one (at most
 * {@code maxLabels} of them at once, the rest counted as {@link ClassLabels#OTHER}), else hot, warm or
 * one-shot by how often its first block was seen (a bounded Space-Saving sketch, fed by every
 * request, labeled or not). Hot prefixes also leave on {@link #HOT_PREFIXES}, at most once per
 * interval each, with the blocks their recent requests share, for the replica planner.
 *
 * <p>Runs at parallelism 1 so the sketch sees every prefix; the sketch and the hot-prefix table
 * live in memory and are rebuilt after a restart (popularity is an estimate, and a fresh one
 * converges within minutes of traffic).
 */
public final class ClassAssigner extends ProcessFunction<JoinedRequest, JoinedRequest> {

    /** Outcomes with no decision carry no label and no prefix. */
    public static final String UNKNOWN = "unknown";
    public static final OutputTag<HotPrefix> HOT_PREFIXES = new OutputTag<>("hot-prefixes") {};

    /** A hot prefix: the longest common prefix of its requests since it became hot, and when it last left. */
    private static final class HotTrack {
        long[] shared;
        int requests;
        long emittedAtMs = Long.MIN_VALUE;
    }

    private final int capacity;
    private final long hotAt;
    private final long warmAt;
    private final long intervalMs;
    private final int maxPrefixBlocks;
    private final int maxLabels;
    private final long labelIdleMs;
    private transient PrefixPopularity popularity;
    private transient ClassLabels labels;
    private transient Map<Long, HotTrack> hot;

    /**
     * @param maxLabels   balancers' labels kept apart at once ({@code ratios.max-classes})
     * @param labelIdleMs a label not seen this long gives its place to a new one
     */
    public ClassAssigner(int capacity, long hotAt, long warmAt, long intervalMs, int maxPrefixBlocks, int maxLabels, long labelIdleMs) {
        this.capacity = capacity;
        this.hotAt = hotAt;
        this.warmAt = warmAt;
        this.intervalMs = intervalMs;
        this.maxPrefixBlocks = maxPrefixBlocks;
        this.maxLabels = maxLabels;
        this.labelIdleMs = labelIdleMs;
    }

    @Override
    public void open(OpenContext openContext) {
        popularity = new PrefixPopularity(capacity);
        labels = new ClassLabels(maxLabels, labelIdleMs);
        getRuntimeContext().getMetricGroup().gauge("kvr_class_labels_overflowed", () -> labels.overflowed());
        // State bound: as many hot prefixes as the sketch tracks; the least recently seen leaves first.
        hot = new LinkedHashMap<>(64, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, HotTrack> eldest) {
                return size() > capacity;
            }
        };
    }

    @Override
    public void processElement(JoinedRequest r, Context ctx, Collector<JoinedRequest> out) {
        boolean hasPrefix = r.unmatched != JoinedRequest.OUTCOME_ONLY && r.rootBlock != 0;
        if (hasPrefix) {
            popularity.add(r.rootBlock);
        }
        String prefixClass = r.prefixClass != null && !r.prefixClass.isBlank()
                ? labels.admit(r.prefixClass, ctx.timerService().currentProcessingTime())
                : !hasPrefix ? UNKNOWN : switch (popularity.classify(r.rootBlock, hotAt, warmAt)) {
                    case HOT -> "hot";
                    case WARM -> "warm";
                    case ONE_SHOT -> "one-shot";
                };
        if (hasPrefix && popularity.guaranteedCount(r.rootBlock) >= hotAt) {
            track(r, prefixClass, ctx.timerService().currentProcessingTime(), ctx);
        }
        out.collect(r.classed(prefixClass));
    }

    private void track(JoinedRequest r, String prefixClass, long now, Context ctx) {
        HotTrack t = hot.computeIfAbsent(r.rootBlock, k -> new HotTrack());
        long[] blocks = r.promptBlocks == null || r.promptBlocks.length == 0 ? new long[] {r.rootBlock} : r.promptBlocks;
        t.shared = t.shared == null ? Arrays.copyOf(blocks, Math.min(blocks.length, maxPrefixBlocks))
                : Arrays.copyOf(t.shared, commonLength(t.shared, blocks));
        t.requests++;
        // Two requests at least, so the shared blocks are a prefix and not one prompt; then once per interval.
        if (t.requests >= 2 && (t.emittedAtMs == Long.MIN_VALUE || now - t.emittedAtMs >= intervalMs)) {
            t.emittedAtMs = now;
            HotPrefix p = new HotPrefix();
            p.rootBlock = r.rootBlock;
            p.prefixBlocks = t.shared.clone();
            p.prefixClass = prefixClass;
            p.requests = popularity.guaranteedCount(r.rootBlock);
            p.exemplarRequestId = r.requestId;
            p.tsMs = now;
            ctx.output(HOT_PREFIXES, p);
        }
    }

    static int commonLength(long[] a, long[] b) {
        int n = Math.min(a.length, b.length);
        int i = 0;
        while (i < n && a[i] == b[i]) {
            i++;
        }
        return Math.max(i, 1);
    }
}
