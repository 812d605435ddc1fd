package dev.kvrouter.httpfleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.bridge.VllmGolden;
import dev.kvrouter.bridge.VllmReplayClient;
import dev.kvrouter.events.AllBlocksCleared;
import dev.kvrouter.events.BlockRemoved;
import dev.kvrouter.events.BlockStored;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.schemas.BlockHashes;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.zeromq.ZContext;

/**
 * The engine's KV events against vLLM's wire format (the bridge's vllm-golden/kv-events, see its
 * README): a batch of the three kinds, built as the simulated engine builds them, is published and
 * asked back over the replay socket exactly as vLLM's subscriber asks; its payload must have the
 * golden payload's structure (same keys, same order, same msgpack types), and the replay the frames
 * and end marker vLLM's publisher sends.
 */
class VllmGoldenKvEventsTest {

    private static final Duration WAIT = Duration.ofSeconds(2);
    private final ZContext zmq = new ZContext(1);
    private final KvEventPublisher publisher = new KvEventPublisher("127.0.0.1", 10);

    @AfterEach
    void stop() {
        publisher.close();
        zmq.close();
    }

    @Test
    void aPublishedBatchHasTheGoldenPayloadsStructureAndReplaysAsVllmsDoes() throws Exception {
        for (long seq = 0; seq < 3; seq++) {
            publisher.kvEvents(gpuBatch(seq));
        }

        List<List<byte[]>> answer = VllmReplayClient.replay(zmq, "tcp://127.0.0.1:" + publisher.replayPort(), 1, WAIT);

        // [delimiter, sequence, payload] for 1 and 2, then [delimiter, -1, empty].
        assertThat(answer).hasSize(3);
        assertThat(answer).allSatisfy(m -> assertThat(m).hasSize(3).first().satisfies(d -> assertThat(d).isEmpty()));
        assertThat(answer.get(0).get(1)).isEqualTo(VllmReplayClient.seq(1));
        assertThat(answer.get(1).get(1)).isEqualTo(VllmReplayClient.seq(2));
        assertThat(answer.get(2).get(1)).isEqualTo(VllmReplayClient.seq(-1));
        assertThat(answer.get(2).get(2)).isEmpty();
        assertThat(structure(answer.get(0).get(2))).containsExactlyElementsOf(structure(VllmGolden.hex("kv-events/gpu-batch.hex")));
    }

    /** A batch like the golden one: a first block of 16 tokens stored, a block evicted, the cache cleared (as SimEngine builds them). */
    private static KvEventBatch gpuBatch(long seq) {
        List<Integer> tokens = IntStream.range(0, 16).map(t -> 1_000 + t).boxed().toList();
        BlockStored stored = BlockStored.newBuilder().setBlockHashes(List.of(BlockHashes.ofUnsigned64(0x834ab12f98a3dcb0L)))
                .setParentBlockHash(null).setTokenIds(tokens).setBlockSize(16).setMedium("GPU").build();
        BlockRemoved removed = BlockRemoved.newBuilder().setBlockHashes(List.of(BlockHashes.ofUnsigned64(0x30e2acea3be39f57L)))
                .setMedium("GPU").build();
        return KvEventBatch.newBuilder().setEngineId("e").setModel("m").setSeq(seq).setTsMs(1_754_551_234_125L)
                .setEvents(List.of(stored, removed, AllBlocksCleared.newBuilder().build())).build();
    }

    /**
     * A payload's structure, one line per value in order: map sizes and keys, array sizes, each
     * value's msgpack type (a float's exact format: msgspec writes float64) and the event tags.
     */
    private static List<String> structure(byte[] payload) throws IOException {
        List<String> out = new ArrayList<>();
        try (MessageUnpacker u = MessagePack.newDefaultUnpacker(payload)) {
            walk(u, "$", out);
            assertThat(u.hasNext()).as("nothing after the batch").isFalse();
        }
        return out;
    }

    private static void walk(MessageUnpacker u, String path, List<String> out) throws IOException {
        MessageFormat format = u.getNextFormat();
        switch (format.getValueType()) {
            case MAP -> {
                int n = u.unpackMapHeader();
                out.add(path + " map(" + n + ")");
                for (int i = 0; i < n; i++) {
                    String key = u.unpackString();
                    if (key.equals("type")) {
                        out.add(path + ".type = " + u.unpackString());
                    } else {
                        walk(u, path + "." + key, out);
                    }
                }
            }
            case ARRAY -> {
                int n = u.unpackArrayHeader();
                out.add(path + " array(" + n + ")");
                for (int i = 0; i < n; i++) {
                    walk(u, path + "[" + i + "]", out);
                }
            }
            case FLOAT -> {
                out.add(path + " " + format);
                u.skipValue();
            }
            default -> {
                out.add(path + " " + format.getValueType());
                u.skipValue();
            }
        }
    }
}
