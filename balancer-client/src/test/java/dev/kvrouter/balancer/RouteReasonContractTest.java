package dev.kvrouter.balancer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.contract.ViewContract;
import dev.kvrouter.events.RouteReason;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Avro enum the decisions carry holds every reason of the view's contract (kvr-view.yaml), and nothing else but
 * UNKNOWN, its default: a reader of an older schema takes a newer reason for UNKNOWN rather than failing.
 */
class RouteReasonContractTest {

    @Test
    void theAvroEnumIsTheContractsReasonsAndUnknown() {
        List<String> avro = Arrays.stream(RouteReason.values()).map(Enum::name).toList();
        List<String> contract = Arrays.stream(ViewContract.Reason.values()).map(Enum::name).toList();
        assertThat(avro).containsAll(contract);
        assertThat(avro).filteredOn(s -> !contract.contains(s)).containsExactly("UNKNOWN");
        assertThat(RouteReason.getClassSchema().getEnumDefault()).isEqualTo("UNKNOWN");
    }
}
