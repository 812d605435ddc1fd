package dev.kvrouter.bridge;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The replay side of vLLM's KV event publisher ({@code ZmqEventPublisher}): a ROUTER that answers a
 * request {@code [empty, start sequence (8 bytes big-endian)]} with every buffered batch from that
 * sequence on, each {@code [empty, sequence, payload]}, then {@code [empty, -1, empty]}; a malformed
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
            poller.close();
            router.close();
        }
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
