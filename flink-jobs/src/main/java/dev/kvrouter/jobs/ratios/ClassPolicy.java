package dev.kvrouter.jobs.ratios;

import dev.kvrouter.jobs.policy.AffinitySwitch;
import dev.kvrouter.metrics.ClassRatios;
import dev.kvrouter.metrics.WindowKind;
import dev.kvrouter.redis.ViewWrite;
import java.time.Duration;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Affinity on or off per prefix class, from each tumbling window's hit rate with hysteresis
 * ({@link AffinitySwitch}), published to the view's {@code classes} hash for {@code kvr_pick}. A
 * class that pays no longer (the one-shot class) stops paying for affinity; it gets it back when
 * its hit rate recovers.
 */
public final class ClassPolicy extends KeyedProcessFunction<String, ClassRatios, ViewWrite> {

    private final AffinitySwitch affinity;
    private transient ValueState<Boolean> on;

    public ClassPolicy(AffinitySwitch affinity) {
        this.affinity = affinity;
    }

    @Override
    public void open(OpenContext openContext) {
        ValueStateDescriptor<Boolean> descriptor = new ValueStateDescriptor<>("affinity-on", Types.BOOLEAN);
        // Class labels come from balancers, so their number is not ours to bound: a class not seen
        // for a day is forgotten (and starts again with affinity on).
        descriptor.enableTimeToLive(StateTtlConfig.newBuilder(Duration.ofDays(1)).build());
        on = getRuntimeContext().getState(descriptor);
    }

    @Override
    public void processElement(ClassRatios r, Context ctx, Collector<ViewWrite> out) throws Exception {
        if (r.getWindowKind() != WindowKind.TUMBLING) {
            return;
        }
        boolean before = on.value() == null || on.value();
        boolean after = affinity.next(before, r.getAffinityHits(), r.getRequests());
        on.update(after);
        // Written every window, not only on change: the hash's TTL is refreshed with the view's.
        out.collect(ViewWrite.classPolicy(r.getPrefixClass(), after ? "on" : "off", r.getWindowEndMs()));
    }
}
