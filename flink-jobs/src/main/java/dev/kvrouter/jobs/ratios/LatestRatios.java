package dev.kvrouter.jobs.ratios;

import dev.kvrouter.metrics.ClassRatios;
import dev.kvrouter.metrics.WindowKind;
import dev.kvrouter.redis.ViewWrite;
import java.util.Locale;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * The latest ratios of each prefix class to the view's ratios hash (field
 * {@code <class>/<tumbling|sliding>}), and the class's fields deleted once it has reported nothing
 * for {@code retentionMs}: the hash's own TTL is refreshed on every flush, so without this a class
 * seen once would stay in it as long as the job runs. Keyed by class.
 */
public final class LatestRatios extends KeyedProcessFunction<String, ClassRatios, ViewWrite> {

    private final long retentionMs;
    /** When the class last reported (processing time); null once its fields are gone. */
    private transient ValueState<Long> lastReportMs;

    public LatestRatios(long retentionMs) {
        this.retentionMs = retentionMs;
    }

    @Override
    public void open(OpenContext openContext) {
        lastReportMs = getRuntimeContext().getState(new ValueStateDescriptor<>("last-report-ms", Types.LONG));
    }

    @Override
    public void processElement(ClassRatios r, Context ctx, Collector<ViewWrite> out) throws Exception {
        long now = ctx.timerService().currentProcessingTime();
        // Timer: one per class at a time, armed at its first report; a later report only moves lastReportMs
        // and the timer, on firing, re-arms itself for the rest of the silence.
        if (lastReportMs.value() == null) {
            ctx.timerService().registerProcessingTimeTimer(now + retentionMs + 1);
        }
        lastReportMs.update(now);
        out.collect(latest(r));
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<ViewWrite> out) throws Exception {
        Long last = lastReportMs.value();
        if (last == null) {
            return;
        }
        if (timestamp - last <= retentionMs) {
            // Timer: the class reported since this timer was armed; wait for the rest of its retention.
            ctx.timerService().registerProcessingTimeTimer(last + retentionMs + 1);
            return;
        }
        // State clearing: silent past the retention — its fields leave the view's ratios hash, and nothing is kept.
        String prefixClass = ctx.getCurrentKey();
        for (WindowKind kind : new WindowKind[] {WindowKind.TUMBLING, WindowKind.SLIDING}) {
            out.collect(ViewWrite.ratios(field(prefixClass, kind), null, timestamp));
        }
        lastReportMs.clear();
    }

    private static String field(String prefixClass, WindowKind kind) {
        return prefixClass + "/" + kind.name().toLowerCase(Locale.ROOT);
    }

    /** The latest figures of a class in Redis: field {@code <class>/<tumbling|sliding>}. */
    static ViewWrite latest(ClassRatios r) {
        String value = String.format(Locale.ROOT, "%d|%d|%.4f|%.1f|%.6f|%.4f|%.4f|%s|%s|%d|%d", r.getWindowEndMs(),
                r.getRequests(), r.getAffinityHitRate(), r.getAvoidedTokensPerHit(), r.getAvoidedUsdPerHit(), r.getLoadGini(),
                r.getStalenessRatio(), r.getTtftP50Ms() == null ? "" : String.format(Locale.ROOT, "%.1f", r.getTtftP50Ms()),
                r.getTtftP99Ms() == null ? "" : String.format(Locale.ROOT, "%.1f", r.getTtftP99Ms()),
                r.getUnmatchedDecisions(), r.getUnmatchedOutcomes());
        return ViewWrite.ratios(field(r.getPrefixClass(), r.getWindowKind()), value, r.getWindowEndMs());
    }
}
