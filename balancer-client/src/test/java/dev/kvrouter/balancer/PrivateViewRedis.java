package dev.kvrouter.balancer;

import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.stack.LocalRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A Redis of a test's own with the view's functions loaded (one a test may stop, or that a call may
 * hang without hanging anybody else's), and a connection to it whose commands time out after 2 s.
 */
final class PrivateViewRedis implements AutoCloseable {

    final LocalRedis server;
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    final RedisCommands<String, String> redis;

    PrivateViewRedis(Path dir) {
        server = LocalRedis.start(dir);
        RedisURI uri = RedisURI.create(server.url());
        uri.setTimeout(Duration.ofSeconds(2)); // a call that hangs fails the test rather than waits
        client = RedisClient.create(uri);
        try {
            connection = client.connect();
            redis = connection.sync();
            redis.functionLoad(ViewLayout.functionLibrary(), true);
        } catch (RuntimeException e) {
            // Nobody gets this object to close: a library Redis refuses must not leave the server running.
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            server.close();
            throw e;
        }
    }

    String url() {
        return server.url();
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        server.close(); // SIGKILL if a call left it busy
    }
}
