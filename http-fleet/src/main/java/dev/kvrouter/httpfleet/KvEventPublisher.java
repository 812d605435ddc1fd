package dev.kvrouter.httpfleet;

import dev.kvrouter.bridge.VllmEventEncoder;
import dev.kvrouter.bridge.VllmReplayServer;
import dev.kvrouter.events.AllBlocksCleared;
import dev.kvrouter.events.BlockRemoved;
import dev.kvrouter.events.BlockStored;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RoutingDecision;
import dev.kvrouter.sim.sink.EventSink;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The engine's KV events as vLLM publishes them ({@code vllm/distributed/kv_events.py},
 * {@code ZmqEventPublisher}): a PUB socket sending [topic, sequence (8 bytes big-endian), msgpack
 * batch] with the batch a map {ts, events, data_parallel_rank} and each event a map led by its
 * "type", fields left at their default omitted (checked against vLLM's own payloads by
 * VllmGoldenKvEventsTest), and a ROUTER answering replay requests [empty, start sequence] with every
 * buffered batch from there, then sequence -1 and an empty payload. The replay
 * buffer keeps the last {@code replayBatches} batches. Load reports and outcomes are not on this
 * wire: a real engine shows its load on {@code /metrics}, and outcomes are the balancer's to report.
 *
 * <p>Threads: {@link #kvEvents} and {@link #load} are called on the engine's driver thread, the only
 * one to touch the PUB socket; the replay socket ({@link VllmReplayServer}) has its own thread. Both
 * bind to loopback.
 */
final class KvEventPublisher implements EventSink {

    private static final int DATA_PARALLEL_RANK = 0;

    private final ZContext zmq = new ZContext(1);
    private final ZMQ.Socket pub;
    private final int eventsPort;
    private final VllmReplayServer replay;
    private final int replayBatches;
    private volatile EngineLoad lastLoad;

    KvEventPublisher(String host, int replayBatches) {
        this.replayBatches = replayBatches;
        pub = zmq.createSocket(SocketType.PUB);
        pub.setLinger(0);
        eventsPort = pub.bindToRandomPort("tcp://" + host);
        replay = new VllmReplayServer(zmq, host);
    }

    int eventsPort() {
        return eventsPort;
    }

    int replayPort() {
        return replay.port();
    }

    /** The engine's last load report (its heartbeat), for the metrics page; null before the first. */
    EngineLoad lastLoad() {
        return lastLoad;
    }

    @Override
    public void kvEvents(KvEventBatch batch) {
        List<VllmEventEncoder.Event> events = new ArrayList<>(batch.getEvents().size());
        for (Object e : batch.getEvents()) {
            events.add(vllm(e));
        }
        // vLLM's publisher sets the batch's rank to its own: 0 without data parallelism.
        byte[] payload = VllmEventEncoder.batch(batch.getTsMs() / 1000.0, events, DATA_PARALLEL_RANK, VllmEventEncoder.Encoding.MAP, true);
        long seq = batch.getSeq();
        // A restarted engine starts again at 0: what the old process buffered is not replayed as the new one's.
        var buffer = replay.buffer();
        if (seq == 0) {
            buffer.clear();
        }
        buffer.put(seq, payload);
        while (buffer.size() > replayBatches) {
            buffer.pollFirstEntry();
        }
        List<byte[]> frames = VllmEventEncoder.frames("", seq, payload);
        pub.sendMore(frames.get(0));
        pub.sendMore(frames.get(1));
        pub.send(frames.get(2));
    }

    private static VllmEventEncoder.Event vllm(Object event) {
        if (event instanceof BlockStored s) {
            int[] tokens = s.getTokenIds().stream().mapToInt(Integer::intValue).toArray();
            return VllmEventEncoder.blockStored(hashes(s.getBlockHashes()), s.getParentBlockHash() == null ? null : s.getParentBlockHash().getLong(0),
                    tokens, s.getBlockSize(), null, s.getMedium(), null, null, null, null, null);
        }
        if (event instanceof BlockRemoved r) {
            return VllmEventEncoder.blockRemoved(hashes(r.getBlockHashes()), r.getMedium(), null);
        }
        if (event instanceof AllBlocksCleared) {
            return VllmEventEncoder.allBlocksCleared();
        }
        throw new IllegalArgumentException("not a KV event: " + event);
    }

    /** The simulator's engine hashes are 8-byte values: vLLM's unsigned 64-bit integers. */
    private static List<Long> hashes(List<ByteBuffer> hashes) {
        List<Long> out = new ArrayList<>(hashes.size());
        for (ByteBuffer h : hashes) {
            out.add(h.getLong(h.position()));
        }
        return out;
    }

    @Override
    public void load(EngineLoad load) {
        lastLoad = load;
    }

    @Override
    public void outcome(RequestOutcome outcome) {}

    @Override
    public void decision(RoutingDecision decision) {}

    @Override
    public void close() {
        replay.close();
        pub.close();
        zmq.close();
    }
}
