package dev.kvrouter.balancer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.schemas.RouteReasons;
import dev.kvrouter.contract.ViewContract.Reason;
import dev.kvrouter.events.RouteReason;
import dev.kvrouter.events.RoutingDecision;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumWriter;
import org.junit.jupiter.api.Test;

/**
 * The Avro enum the decisions carry is the contract's families (its reasons without a family) and UNKNOWN, its
 * default. A finer reason travels as its family in {@code reason} and as itself in {@code reason_detail}, so readers of
 * the released schema, dashboards and alert rules written for SPILL_BUSY or SPILL_HOT see the reason they know.
 */
class RouteReasonContractTest {

    private static final Path RELEASED = Path.of("../schemas/released/v1");

    @Test
    void theAvroEnumIsTheContractsFamiliesAndUnknown() {
        List<String> avro = Arrays.stream(RouteReason.values()).map(Enum::name).toList();
        List<String> families = Arrays.stream(Reason.values()).filter(r -> r.family() == r).map(Enum::name).toList();
        assertThat(avro).containsAll(families);
        assertThat(avro).filteredOn(s -> !families.contains(s)).containsExactly("UNKNOWN");
        assertThat(RouteReason.getClassSchema().getEnumDefault()).isEqualTo("UNKNOWN");
    }

    @Test
    void everyReasonIsCarriedAsItsFamilyWithItselfAsTheDetail() {
        for (Reason reason : Reason.values()) {
            assertThat(RouteReasons.of(reason.name())).as(reason.name()).isEqualTo(RouteReason.valueOf(reason.family().name()));
            assertThat(RouteReasons.detail(reason.name())).as(reason.name()).isEqualTo(reason.family() == reason ? null : reason.name());
        }
        assertThat(RouteReasons.of("A_REASON_OF_A_LATER_LIBRARY")).isEqualTo(RouteReason.UNKNOWN);
        assertThat(RouteReasons.detail("A_REASON_OF_A_LATER_LIBRARY")).isEqualTo("A_REASON_OF_A_LATER_LIBRARY");
        assertThat(RouteReasons.of(null)).isEqualTo(RouteReason.UNKNOWN);
        assertThat(RouteReasons.detail(null)).isNull();
    }

    @Test
    void aReaderOfTheReleasedSchemaSeesTheFamilyOfARefinedReason() throws IOException {
        Schema.Parser parser = new Schema.Parser();
        parser.parse(RELEASED.resolve("dev/kvrouter/events/RouteReason.avsc").toFile());
        Schema released = parser.parse(RELEASED.resolve("dev/kvrouter/events/RoutingDecision.avsc").toFile());
        for (Reason refined : Arrays.stream(Reason.values()).filter(r -> r.family() != r).toList()) {
            RoutingDecision decision = RoutingDecision.newBuilder().setRequestId("r").setEngineId("e1").setPredictedCachedBlocks(0)
                    .setTsMs(1L).setReason(RouteReasons.of(refined.name())).setReasonDetail(RouteReasons.detail(refined.name())).build();
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            BinaryEncoder out = EncoderFactory.get().binaryEncoder(bytes, null);
            new SpecificDatumWriter<>(RoutingDecision.class).write(decision, out);
            out.flush();
            GenericRecord read = new GenericDatumReader<GenericRecord>(RoutingDecision.getClassSchema(), released)
                    .read(null, DecoderFactory.get().binaryDecoder(bytes.toByteArray(), null));
            assertThat(read.get("reason").toString()).as(refined.name()).isEqualTo(refined.family().name());
            assertThat(released.getField("reason").schema().getEnumSymbols()).contains(refined.family().name());
        }
    }
}
