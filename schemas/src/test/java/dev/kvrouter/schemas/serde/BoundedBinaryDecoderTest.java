package dev.kvrouter.schemas.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvrouter.schemas.SampleRecords;
import java.io.EOFException;
import java.util.Arrays;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificRecord;
import org.junit.jupiter.api.Test;

/** The bounded decoder reads what Avro's encoder writes, for every record of the project, and no byte more. */
class BoundedBinaryDecoderTest {

    @Test
    void everySampleRecordReadsBackAsWrittenAndOneByteShortIsRefused() throws Exception {
        for (SpecificRecord record : SampleRecords.all()) {
            byte[] bytes = SampleRecords.avroBody(record);
            SpecificDatumReader<SpecificRecord> reader = new SpecificDatumReader<>(record.getSchema());
            byte[] framed = new byte[bytes.length + 3]; // at an offset, with bytes after it
            System.arraycopy(bytes, 0, framed, 2, bytes.length);
            assertThat(reader.read(null, new BoundedBinaryDecoder(framed, 2, bytes.length))).as(record.getSchema().getName()).isEqualTo(record);
            assertThatThrownBy(() -> reader.read(null, new BoundedBinaryDecoder(Arrays.copyOf(bytes, bytes.length - 1), 0, bytes.length - 1)))
                    .as(record.getSchema().getName()).isInstanceOfAny(EOFException.class, AvroRuntimeException.class);
        }
    }
}
