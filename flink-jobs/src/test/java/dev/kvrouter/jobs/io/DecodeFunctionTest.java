package dev.kvrouter.jobs.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvrouter.dlq.DeadLetter;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.jobs.io.RawRecord;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Optional;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.Test;

class DecodeFunctionTest {

    @Test
    void bytesThatAreNotTheFormatBecomeADeadLetterWithTheirOrigin() throws Exception {
        try (var h = harness("http://127.0.0.1:" + closedPort())) {
            h.processElement(new RawRecord("kvr.kv-events", 3, 42, 0, "e1".getBytes(), "garbage".getBytes()), 0);
            h.processElement(new RawRecord("kvr.kv-events", 3, 43, 0, "e1".getBytes(), null), 0);
            assertThat(h.extractOutputValues()).isEmpty();
            var letters = h.getSideOutput(DecodeFunction.DEAD_LETTERS).stream().map(StreamRecord::getValue).toList();
            assertThat(letters).extracting(DeadLetter::getSourceOffset).containsExactly(42L, 43L);
            assertThat(letters.get(0).getReason()).contains("expected the magic byte 0x00");
            assertThat(letters.get(0).getSourcePartition()).isEqualTo(3);
            assertThat(letters.get(1).getReason()).contains("tombstone");
            assertThat(letters.get(0).getTruncated()).isFalse();
            assertThat(letters.get(0).getRawValueBytes()).isEqualTo(7);
        }
    }

    @Test
    void aMalformedRecordTooLargeForTheDeadLetterTopicIsDeadLetteredTruncatedWithItsSize() throws Exception {
        byte[] twoMiB = new byte[2 * 1024 * 1024];
        java.util.Arrays.fill(twoMiB, (byte) 7);
        try (var h = harness("http://127.0.0.1:" + closedPort())) {
            h.processElement(new RawRecord("kvr.kv-events", 1, 9, 0, "e1".getBytes(), twoMiB), 0);
            DeadLetter letter = h.getSideOutput(DecodeFunction.DEAD_LETTERS).peek().getValue();
            assertThat(letter.getTruncated()).isTrue();
            assertThat(letter.getRawValueBytes()).isEqualTo(twoMiB.length);
            assertThat(letter.getRawValue().remaining()).isEqualTo(dev.kvrouter.schemas.DeadLetters.MAX_VALUE_BYTES);
            assertThat(letter.getSourceOffset()).isEqualTo(9);
            assertThat(letter.getReason()).contains("magic byte");
        }
    }

    @Test
    void anUnreachableRegistryFailsTheTaskInsteadOfFilingGoodRecordsAsDeadLetters() throws Exception {
        try (var h = harness("http://127.0.0.1:" + closedPort())) {
            byte[] wellFormedHeader = {0, 0, 0, 0, 7, 2, 4};
            assertThatThrownBy(() -> h.processElement(new RawRecord("kvr.kv-events", 0, 1, 0, null, wellFormedHeader), 0))
                    .hasStackTraceContaining("schema registry unreachable");
            assertThat(h.getSideOutput(DecodeFunction.DEAD_LETTERS)).isNullOrEmpty();
        }
    }

    /**
     * A registry that refuses us (credentials, permissions, rate limit) says nothing about the record:
     * the task fails with the registry's answer and files nothing, so the record is read again after
     * the restart instead of being dead-lettered with its offset committed past it.
     */
    @Test
    void aRegistryThatRefusesUsFailsTheTaskAndFilesNothing() throws Exception {
        for (int status : new int[] {401, 403, 429}) {
            com.sun.net.httpserver.HttpServer registry = com.sun.net.httpserver.HttpServer.create(
                    new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            registry.createContext("/", exchange -> {
                byte[] body = ("{\"error_code\": " + status + ", \"message\": \"refused\"}").getBytes();
                exchange.sendResponseHeaders(status, body.length);
                exchange.getResponseBody().write(body);
                exchange.close();
            });
            registry.start();
            try (var h = harness("http://127.0.0.1:" + registry.getAddress().getPort())) {
                byte[] wellFormedHeader = {0, 0, 0, 0, 7, 2, 4};
                assertThatThrownBy(() -> h.processElement(new RawRecord("kvr.kv-events", 0, 1, 0, null, wellFormedHeader), 0))
                        .as("HTTP %d", status).hasStackTraceContaining("HTTP " + status);
                assertThat(h.getSideOutput(DecodeFunction.DEAD_LETTERS)).as("HTTP %d", status).isNullOrEmpty();
            } finally {
                registry.stop(0);
            }
        }
    }

    private static OneInputStreamOperatorTestHarness<RawRecord, KvEventBatch> harness(String registry) throws Exception {
        return ProcessFunctionTestHarnesses.forProcessFunction(
                new DecodeFunction<>(KvEventBatch.class, DecodeFunction.registry(registry), b -> Optional.empty()));
    }

    private static int closedPort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
