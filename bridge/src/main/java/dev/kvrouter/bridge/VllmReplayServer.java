package dev.kvrouter.bridge;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The replay side of vLLM's KV event publisher ({@code ZmqEventPublisher}): a ROUTER that answers a
 * request {@code [empty, start sequence]} (big-endian unsigned, 8 bytes from vLLM's subscribers, any
 * length read as vLLM reads it) with every buffered batch from that sequence on, each {@code [empty, sequence, payload]}, then {@code [empty, -1, empty]}; a malformed
 * request is ignored, as vLLM ignores it. For a stand-in engine (the simulated HTTP engines, the
 * bridge's tests): the caller fills {@link #buffer()}. One thread, its own; binds to {@code host}.
 */
public final class VllmReplayServer implements AutoCloseable {

    private final ZContext zmq;
    private final ZMQ.Socket router;
    private final int port;
    private final ConcurrentSkipListMap<Long, byte[]> buffer = new ConcurrentSkipListMap<>();
    private final Thread thread;
    private volatile boolean running = true;

    public VllmReplayServer(ZContext zmq, String host) {
        this.zmq = zmq;
        router = zmq.createSocket(SocketType.ROUTER);
        router.setLinger(0);
        port = router.bindToRandomPort("tcp://" + host);
        thread = new Thread(this::serve, "vllm-replay-" + port);
        thread.setDaemon(true);
        thread.start();
    }

    public int port() {
        return port;
    }

    /** The batches it can replay, by sequence: the caller adds, trims and clears them. */
    public ConcurrentSkipListMap<Long, byte[]> buffer() {
        return buffer;
    }

    private void serve() {
        ZMQ.Poller poller = zmq.createPoller(1);
        poller.register(router, ZMQ.Poller.POLLIN);
        try {
            while (running) {
                // A bounded wait, so close() is seen within 100 ms.
                if (poller.poll(100) <= 0) {
                    continue;
                }
                // [client, empty, start sequence]; anything else is ignored, as vLLM logs "Invalid replay request".
                List<byte[]> request = EngineSubscription.receive(router, 0);
                if (request == null || request.size() != 3) {
                    continue;
                }
                byte[] client = request.get(0);
                // As vLLM reads it (int.from_bytes(start, "big")): unsigned, of any length; past 2^63 - 1 nothing is buffered.
                BigInteger start = new BigInteger(1, request.get(2));
                if (start.bitLength() < Long.SIZE) {
                    for (Map.Entry<Long, byte[]> e : buffer.tailMap(start.longValue()).entrySet()) {
                        reply(client, e.getKey(), e.getValue());
                    }
                }
                reply(client, -1, new byte[0]);
            }
        } catch (org.zeromq.ZMQException e) {
            if (running) {
                throw e;
            }
        } finally {
            poller.close();
            router.close();
        }
    }

    /** One replayed batch to the client: [empty, sequence, payload]. */
    private void reply(byte[] client, long seq, byte[] payload) {
        router.sendMore(client);
        router.sendMore(new byte[0]);
        router.sendMore(ByteBuffer.allocate(8).putLong(seq).array());
        router.send(payload);
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
