package dev.kvrouter.jobs.alerts;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.alerts.Alert;
import dev.kvrouter.alerts.AlertKind;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.Test;

class AlertRulesTest {

    @Test
    void anAlertFiresOnceAndClearsOnceAndKeepsNothingWhenClear() throws Exception {
        try (KeyedOneInputStreamOperatorTestHarness<String, AlertObservation, Alert> h =
                     ProcessFunctionTestHarnesses.forKeyedProcessFunction(new AlertRules(), AlertObservation::key, Types.STRING)) {
            h.processElement(obs(0.1, false), 0);
            h.processElement(obs(0.4, true), 1);
            h.processElement(obs(0.5, true), 2);
            assertThat(h.numKeyedStateEntries()).isEqualTo(1);
            h.processElement(obs(0.1, false), 3);
            h.processElement(obs(0.05, false), 4);
            assertThat(h.extractOutputValues()).extracting(Alert::getFiring, Alert::getValue)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple(true, 0.4), org.assertj.core.groups.Tuple.tuple(false, 0.1));
            assertThat(h.extractOutputValues().get(1).getMessage()).startsWith("cleared: ");
            assertThat(h.numKeyedStateEntries()).isZero();
        }
    }

    private static AlertObservation obs(double value, boolean breached) {
        return new AlertObservation(AlertKind.STALE_VIEW, "app-a", value, 0.2, breached, "staleness " + value, 0);
    }
}
