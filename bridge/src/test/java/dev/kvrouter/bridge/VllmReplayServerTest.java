package dev.kvrouter.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.zeromq.ZContext;

/**
 * The stand-in replay endpoint against vLLM's replay protocol ({@code ZmqEventPublisher._service_replay}
 * in vllm/distributed/kv_events.py @ 0181ea3173e53eea8cf04a86891488e3dc89bb34): asked as vLLM's own
 * subscriber asks ({@link VllmReplayClient}), it answers every buffered batch from the start on as
 * [sequence, payload] behind the delimiter, then sequence -1 (8 bytes signed) with an empty payload.
 */
class VllmReplayServerTest {

    private static final Duration WAIT = Duration.ofSeconds(2);
    private final ZContext zmq = new ZContext(1);
    private VllmReplayServer server;
    private String endpoint;

    @BeforeEach
    void start() {
        server = new VllmReplayServer(zmq, "127.0.0.1");
        endpoint = "tcp://127.0.0.1:" + server.port();
        byte[] payload = VllmGolden.hex("kv-events/gpu-batch.hex");
        for (long seq = 0; seq < 5; seq++) {
            server.buffer().put(seq, payload);
        }
    }

    @AfterEach
    void stop() {
        server.close();
        zmq.close();
    }

    @Test
    void aReplayIsAnsweredFrameForFrameAsVllmsPublisherAnswersIt() {
        List<List<byte[]>> answer = VllmReplayClient.replay(zmq, endpoint, 2, WAIT);

        assertThat(answer).hasSize(4);
        for (int i = 0; i < 3; i++) {
            List<byte[]> m = answer.get(i);
            assertThat(m).hasSize(3);
            assertThat(m.get(0)).as("the delimiter REQ takes off").isEmpty();
            assertThat(m.get(1)).isEqualTo(VllmReplayClient.seq(2 + i));
            assertThat(m.get(2)).isEqualTo(VllmGolden.hex("kv-events/gpu-batch.hex"));
        }
        // END_SEQ = (-1).to_bytes(8, "big", signed=True), then b"".
        assertThat(answer.get(3)).hasSize(3);
        assertThat(answer.get(3).get(1)).containsExactly(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
        assertThat(answer.get(3).get(2)).isEmpty();

        // vLLM's example subscriber, on its REQ socket, reads [sequence, payload].
        List<byte[]> first = VllmReplayClient.firstReply(zmq, endpoint, 3, WAIT);
        assertThat(first).hasSize(2);
        assertThat(first.get(0)).isEqualTo(VllmReplayClient.seq(3));
    }

    @Test
    void theStartIsReadAsVllmReadsItUnsignedBigEndian() {
        // int.from_bytes(start, "big") is unsigned: 2^63 is past every sequence, so only the end marker comes.
        List<List<byte[]>> past = VllmReplayClient.replay(zmq, endpoint, Long.MIN_VALUE, WAIT);
        assertThat(past).hasSize(1);
        assertThat(ByteBuffer.wrap(past.get(0).get(1)).getLong()).isEqualTo(-1);

        // Nor does vLLM insist on 8 bytes: a 4-byte start 3 replays from 3.
        List<byte[]> first = VllmReplayClient.firstReply(zmq, endpoint, new byte[] {0, 0, 0, 3}, WAIT);
        assertThat(first).as("an answer to a 4-byte start").hasSize(2);
        assertThat(first.get(0)).isEqualTo(VllmReplayClient.seq(3));
    }
}
