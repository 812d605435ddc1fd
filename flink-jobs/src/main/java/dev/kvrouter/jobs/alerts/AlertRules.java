package dev.kvrouter.jobs.alerts;

import dev.kvrouter.alerts.Alert;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Turns observations into alerts, keyed by kind and subject: an alert fires when its subject
 * crosses the threshold and clears when it comes back, once each way (no repeat while it stays).
 */
public final class AlertRules extends KeyedProcessFunction<String, AlertObservation, Alert> {

    private transient ValueState<Boolean> firing;

    @Override
    public void open(OpenContext openContext) {
        firing = getRuntimeContext().getState(new ValueStateDescriptor<>("firing", Types.BOOLEAN));
    }

    @Override
    public void processElement(AlertObservation o, Context ctx, Collector<Alert> out) throws Exception {
        boolean wasFiring = Boolean.TRUE.equals(firing.value());
        if (o.breached() == wasFiring) {
            return;
        }
        out.collect(Alert.newBuilder().setKind(o.kind()).setSubject(o.subject()).setFiring(o.breached())
                .setValue(o.value()).setThreshold(o.threshold())
                .setMessage((o.breached() ? "" : "cleared: ") + o.message()).setTsMs(o.tsMs()).build());
        if (o.breached()) {
            firing.update(true);
        } else {
            // State clearing: a cleared alert keeps nothing; only firing ones are remembered.
            firing.clear();
        }
    }
}
