package dev.kvrouter.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import java.time.Duration;

/** Lettuce clients as kv-router uses them: explicit timeouts, a bounded queue, fail fast when disconnected. */
public final class RedisClients {

    private RedisClients() {}

    /**
     * @param commandTimeout every command's timeout
     * @param connectTimeout connecting and the connection handshake (the first one warms the JVM up too)
     * @param requestQueue   commands queued per connection at most
     */
    public static RedisClient create(String redisUrl, Duration commandTimeout, Duration connectTimeout, int requestQueue) {
        RedisURI uri = RedisURI.create(redisUrl);
        // The handshake runs under the URI's timeout; commands under TimeoutOptions below.
        uri.setTimeout(connectTimeout);
        RedisClient client = RedisClient.create(uri);
        client.setOptions(ClientOptions.builder()
                .autoReconnect(true)
                // A disconnected client rejects commands at once instead of buffering them without bound.
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .requestQueueSize(requestQueue)
                .timeoutOptions(TimeoutOptions.enabled(commandTimeout))
                .socketOptions(SocketOptions.builder().connectTimeout(connectTimeout).build())
                .build());
        return client;
    }
}
