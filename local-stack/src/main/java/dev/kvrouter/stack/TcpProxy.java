package dev.kvrouter.stack;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A loopback TCP relay a test can cut, to make "the service went away" happen on cue, and open
 * again on the same port, to make it come back.
 */
public final class TcpProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    public TcpProxy(String targetHost, int targetPort) throws IOException {
        this(0, targetHost, targetPort);
    }

    /** Listens on {@code listenPort} (0 for any free one). */
    public TcpProxy(int listenPort, String targetHost, int targetPort) throws IOException {
        listener = new ServerSocket();
        listener.setReuseAddress(true);
        listener.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), listenPort), 50);
        Thread acceptor = new Thread(() -> {
            while (!listener.isClosed()) {
                try {
                    Socket in = listener.accept();
                    Socket out = new Socket(targetHost, targetPort);
                    sockets.add(in);
                    sockets.add(out);
                    pump(in, out);
                    pump(out, in);
                } catch (IOException closed) {
                    return;
                }
            }
        }, "tcp-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public int port() {
        return listener.getLocalPort();
    }

    private static void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                in.transferTo(out);
            } catch (IOException ignored) {
                // one side closed: the relay ends
            }
        }, "tcp-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    /** Stops accepting and drops every relayed connection. */
    @Override
    public void close() throws IOException {
        listener.close();
        for (Socket s : sockets) {
            s.close();
        }
    }
}
