package dev.kvrouter.schemas.serde;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.schemas.SampleRecords;
import java.io.IOException;
import java.util.List;
import java.util.Random;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificRecord;
import org.junit.jupiter.api.Test;

/**
 * 10 000 record bodies a buggy or hostile producer could write to a topic the job reads: every record
 * of the project's schemas with bytes flipped, truncated, or a length or count blown up to 2^31.
 * Each one reads as a record or fails with what {@link RegistryAvroDeserializer} turns into a dead
 * letter (an {@code IOException} or a {@code RuntimeException}); no {@code Error} escapes — no
 * {@code OutOfMemoryError} from a size taken on trust, which would crash-loop the job.
 */
class AvroDecodeFuzzTest {

    private static final int BODIES = 10_000;

    @Test
    void everyMutatedBodyReadsOrFailsAsADeadLetterWouldNeverAsAnError() throws Exception {
        List<SpecificRecord> records = SampleRecords.all();
        Random random = new Random(41);
        int failed = 0;
        for (int i = 0; i < BODIES; i++) {
            SpecificRecord record = records.get(random.nextInt(records.size()));
            byte[] body = mutate(SampleRecords.avroBody(record), random);
            SpecificDatumReader<SpecificRecord> reader = new SpecificDatumReader<>(record.getSchema());
            try {
                reader.read(null, new BoundedBinaryDecoder(body, 0, body.length));
            } catch (IOException | RuntimeException deadLetter) {
                failed++;
            } catch (Throwable t) {
                throw new AssertionError(record.getSchema().getName() + " body " + i + " (" + body.length + " bytes) escaped as " + t, t);
            }
        }
        assertThat(failed).as("many mutations fail to read").isGreaterThan(BODIES / 10);
    }

    /** Flips bytes, truncates, or writes a zig-zag long of 2^31 (a length or a count) somewhere. */
    private static byte[] mutate(byte[] body, Random random) {
        byte[] f = body.clone();
        switch (random.nextInt(3)) {
            case 0 -> {
                for (int k = 0; k <= random.nextInt(3); k++) {
                    f[random.nextInt(f.length)] = (byte) random.nextInt(256);
                }
            }
            case 1 -> f = java.util.Arrays.copyOf(f, random.nextInt(f.length));
            default -> {
                byte[] huge = {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x10}; // zig-zag varint of 2^31
                int at = random.nextInt(f.length);
                byte[] g = new byte[f.length + huge.length];
                System.arraycopy(f, 0, g, 0, at);
                System.arraycopy(huge, 0, g, at, huge.length);
                System.arraycopy(f, at, g, at + huge.length, f.length - at);
                f = g;
            }
        }
        return f;
    }
}
