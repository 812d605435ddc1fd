package dev.kvrouter.jobs.ratios;

import dev.kvrouter.events.RoutingDecision;
import dev.kvrouter.redis.ViewWrite;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Each client's requests in flight per engine, keyed by client id: a routing decision adds one on
 * its engine, the request's completion (joined with its outcome, or given up as unmatched) takes
 * it away. Published to the view's {@code clients} hash for the per-client cap in pick.
 */
public final class ClientInflight extends KeyedCoProcessFunction<String, RoutingDecision, JoinedRequest, ViewWrite> {

    private transient MapState<String, Integer> inflight;

    @Override
    public void open(OpenContext openContext) {
        MapStateDescriptor<String, Integer> descriptor = new MapStateDescriptor<>("inflight", Types.STRING, Types.INT);
        // A request whose completion is lost for good (both sides never joined nor timed out, e.g. a
        // replay boundary) must not pin a count forever. Client maps are small: cleanup is cheap.
        descriptor.enableTimeToLive(StateTtlConfig.newBuilder(Duration.ofHours(1)).build());
        inflight = getRuntimeContext().getMapState(descriptor);
    }

    @Override
    public void processElement1(RoutingDecision d, Context ctx, Collector<ViewWrite> out) throws Exception {
        change(d.getEngineId(), 1, ctx.timerService().currentProcessingTime(), ctx.getCurrentKey(), out);
    }

    @Override
    public void processElement2(JoinedRequest done, Context ctx, Collector<ViewWrite> out) throws Exception {
        if (done.decidedEngine != null) {
            change(done.decidedEngine, -1, ctx.timerService().currentProcessingTime(), ctx.getCurrentKey(), out);
        }
    }

    private void change(String engine, int delta, long now, String client, Collector<ViewWrite> out) throws Exception {
        Integer before = inflight.get(engine);
        int after = (before == null ? 0 : before) + delta;
        // State clearing: an engine with nothing in flight for this client leaves the map. A count
        // may dip below zero for a moment when a completion overtakes its decision; it is kept.
        if (after == 0) {
            inflight.remove(engine);
        } else {
            inflight.put(engine, after);
        }
        TreeMap<String, Integer> positive = new TreeMap<>();
        for (Map.Entry<String, Integer> e : inflight.entries()) {
            if (e.getValue() > 0) {
                positive.put(e.getKey(), e.getValue());
            }
        }
        StringBuilder value = new StringBuilder();
        positive.forEach((e, n) -> value.append(value.length() == 0 ? "" : ",").append(e).append('=').append(n));
        out.collect(ViewWrite.clientInflight(client, positive.isEmpty() ? null : value.toString(), now));
    }
}
