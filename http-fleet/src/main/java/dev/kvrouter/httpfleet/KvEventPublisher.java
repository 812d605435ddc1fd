package dev.kvrouter.httpfleet;

import dev.kvrouter.bridge.VllmEventEncoder;
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
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The engine's KV events as vLLM publishes them ({@code vllm/distributed/kv_events.py},
 * {@code ZmqEventPublisher}): a PUB socket sending [topic, sequence (8 bytes big-endian), msgpack
 * batch] with each event a tagged array, and a ROUTER answering replay requests [empty, start
 * sequence] with every buffered batch from there, then sequence -1 and an empty payload. The replay
 * buffer keeps the last {@code replayBatches} batches. Load reports and outcomes are not on this
 * wire: a real engine shows its load on {@code /metrics}, and outcomes are the balancer's to report.
 *
 * <p>Threads: {@link #kvEvents} and {@link #load} are called on the engine's driver thread, the only
 * one to touch the PUB socket; the replay socket has its own thread. Both bind to loopback.
 */
final class KvEventPublisher implements EventSink {

    private final ZContext zmq = new ZContext(1);
    private final ZMQ.Socket pub;
    private final ZMQ.Socket router;
    private final int eventsPort;
    private final int replayPort;
    private final int replayBatches;
    private final ConcurrentSkipListMap<Long, byte[]> buffer = new ConcurrentSkipListMap<>();
    private final Thread replayThread;
    private volatile boolean running = true;
    private volatile EngineLoad lastLoad;

    KvEventPublisher(String host, int replayBatches) {
        this.replayBatches = replayBatches;
        pub = zmq.createSocket(SocketType.PUB);
        pub.setLinger(0);
        eventsPort = pub.bindToRandomPort("tcp://" + host);
        router = zmq.createSocket(SocketType.ROUTER);
        router.setLinger(0);
        replayPort = router.bindToRandomPort("tcp://" + host);
        replayThread = new Thread(this::serveReplays, "kv-event-replay");
        replayThread.setDaemon(true);
        replayThread.start();
    }

    int eventsPort() {
        return eventsPort;
    }

    int replayPort() {
        return replayPort;
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
        byte[] payload = VllmEventEncoder.batch(batch.getTsMs() / 1000.0, events, null, VllmEventEncoder.Encoding.TAGGED_ARRAY, false);
        long seq = batch.getSeq();
        // A restarted engine starts again at 0: what the old process buffered is not replayed as the new one's.
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

    private void serveReplays() {
        try (ZMQ.Poller poller = zmq.createPoller(1)) {
            poller.register(router, ZMQ.Poller.POLLIN);
            while (running) {
                // A bounded wait, so close() is seen within 100 ms.
                if (poller.poll(100) <= 0) {
                    continue;
                }
                byte[] client = router.recv(0);
                List<byte[]> rest = new ArrayList<>(2);
                while (router.hasReceiveMore()) {
                    byte[] more = router.recv(0);
                    if (rest.size() < 3) {
                        rest.add(more);
                    }
                }
                if (rest.size() != 2 || rest.get(1).length != 8) {
                    continue; // vLLM logs "Invalid replay request" and ignores it
                }
                long start = ByteBuffer.wrap(rest.get(1)).getLong();
                for (Map.Entry<Long, byte[]> e : buffer.tailMap(start).entrySet()) {
                    router.sendMore(client);
                    router.sendMore(new byte[0]);
                    router.sendMore(ByteBuffer.allocate(8).putLong(e.getKey()).array());
                    router.send(e.getValue());
                }
                router.sendMore(client);
                router.sendMore(new byte[0]);
                router.sendMore(ByteBuffer.allocate(8).putLong(-1).array());
                router.send(new byte[0]);
            }
        } catch (org.zeromq.ZMQException e) {
            if (running) {
                throw e;
            }
        } finally {
            router.close();
        }
    }

    @Override
    public void close() {
        running = false;
        try {
            replayThread.join(1_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        pub.close();
        zmq.close();
    }
}
