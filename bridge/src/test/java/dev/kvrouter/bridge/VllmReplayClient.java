package dev.kvrouter.bridge;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Asks a KV event replay endpoint the way vLLM's own subscribers do
 * ({@code examples/online_serving/kv_events_subscriber.py} and {@code tests/distributed/conftest.py},
 * see vllm-golden/README.md): a REQ socket sending the start sequence as one frame of 8 bytes
 * big-endian, which REQ puts on the wire as [empty delimiter, start]. A REQ socket takes one reply
 * per request, so {@link #firstReply} reads what vLLM's example reads first; {@link #replay} reads the
 * whole answer on a DEALER that sends REQ's very frames, so the publisher cannot tell them apart.
 *
 * <p>A fresh jeromq connection can stall before its handshake (see HttpEngineTest): a request that
 * gets no answer within {@code wait} is asked again on a new socket, a few times.
 */
public final class VllmReplayClient {

    private static final int ATTEMPTS = 5;

    private VllmReplayClient() {}

    /** The first reply's frames (after REQ took off the delimiter): [sequence, payload]; empty if none came. */
    public static List<byte[]> firstReply(ZContext zmq, String endpoint, long start, Duration wait) {
        return firstReply(zmq, endpoint, seq(start), wait);
    }

    /** The same with the start frame as given (vLLM reads any length as an unsigned big-endian number). */
    public static List<byte[]> firstReply(ZContext zmq, String endpoint, byte[] start, Duration wait) {
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            ZMQ.Socket req = zmq.createSocket(SocketType.REQ);
            try {
                req.setLinger(0);
                req.connect(endpoint);
                req.send(start, 0);
                List<byte[]> reply = receive(req, wait);
                if (reply != null) {
                    return reply;
                }
            } finally {
                req.close();
            }
        }
        return List.of();
    }

    /**
     * Every message of the answer, frames as a REQ-framed client receives them ([empty delimiter,
     * sequence, payload]), up to and including the end marker; empty if nothing came.
     */
    public static List<List<byte[]>> replay(ZContext zmq, String endpoint, long start, Duration wait) {
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            ZMQ.Socket dealer = zmq.createSocket(SocketType.DEALER);
            try {
                dealer.setLinger(0);
                dealer.connect(endpoint);
                dealer.send(new byte[0], ZMQ.SNDMORE);
                dealer.send(seq(start), 0);
                List<List<byte[]>> messages = new ArrayList<>();
                for (List<byte[]> m = receive(dealer, wait); m != null; m = receive(dealer, wait)) {
                    messages.add(m);
                    if (m.size() >= 2 && m.get(m.size() - 2).length == 8 && ByteBuffer.wrap(m.get(m.size() - 2)).getLong() == -1) {
                        break;
                    }
                }
                if (!messages.isEmpty()) {
                    return messages;
                }
            } finally {
                dealer.close();
            }
        }
        return List.of();
    }

    /** A sequence as vLLM writes it: 8 bytes big-endian ({@code seq.to_bytes(8, "big")}). */
    public static byte[] seq(long seq) {
        return ByteBuffer.allocate(8).putLong(seq).array();
    }

    /** One whole message within {@code wait}, or null. */
    public static List<byte[]> receive(ZMQ.Socket socket, Duration wait) {
        socket.setReceiveTimeOut((int) wait.toMillis());
        byte[] first = socket.recv(0);
        if (first == null) {
            return null;
        }
        List<byte[]> frames = new ArrayList<>(List.of(first));
        while (socket.hasReceiveMore()) {
            frames.add(socket.recv(0));
        }
        return frames;
    }
}
