package dev.kvrouter.jobs.view.functions;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.events.EngineHealth;
import dev.kvrouter.jobs.view.model.EngineStatus;
import dev.kvrouter.redis.ViewWrite;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.Test;

class FleetLoadTest {

    @Test
    void publishesMeanGiniAndHotEnginesEachIntervalAndStopsWhenTheFleetIsGone() throws Exception {
        try (KeyedOneInputStreamOperatorTestHarness<String, EngineStatus, ViewWrite> h =
                     ProcessFunctionTestHarnesses.forKeyedProcessFunction(new FleetLoad(1_000, 2.0), s -> FleetLoad.FLEET, Types.STRING)) {
            h.setProcessingTime(0);
            h.processElement(status("e1", "READY", 1), 0);
            h.processElement(status("e2", "READY", 9), 0);
            h.processElement(status("e3", "READY", 0), 0);
            h.processElement(status("e4", "BUSY", 0), 0);
            h.setProcessingTime(1_000);
            // loads 0,0,1,9: mean 2.5; Gini = 2*(3*1 + 4*9)/(4*10) - 5/4 = 0.7; 9 > 2 x 2.5
            assertThat(meta(h)).containsEntry("fleet_engines", "4").containsEntry("fleet_mean_load", "2.500")
                    .containsEntry("load_gini", "0.7000").containsEntry("hot_engines", "e2");

            for (String e : new String[] {"e1", "e2", "e3", "e4"}) {
                h.processElement(status(e, "DEAD", 0), 1_500);
            }
            h.setProcessingTime(2_000);
            assertThat(meta(h)).containsEntry("fleet_engines", "0").containsEntry("hot_engines", "");
            // e2 became hot at the first tick and cooled down (it is gone) at the second.
            assertThat(h.getSideOutput(FleetLoad.HOT_ENGINES)).extracting(r -> r.getValue().subject() + ":" + r.getValue().breached())
                    .containsExactly("e2:true", "e2:false");
            assertThat(h.numKeyedStateEntries()).isZero();
            assertThat(h.numProcessingTimeTimers()).isZero();
        }
    }

    private static Map<String, String> meta(KeyedOneInputStreamOperatorTestHarness<String, EngineStatus, ViewWrite> h) {
        Map<String, String> latest = new LinkedHashMap<>();
        h.extractOutputValues().forEach(w -> latest.put(w.field, w.value));
        return latest;
    }

    private static EngineStatus status(String engine, String health, int waiting) {
        EngineStatus s = new EngineStatus();
        s.engine = engine;
        s.currentHealth = EngineHealth.valueOf(health);
        s.waiting = waiting;
        return s;
    }
}
