package dev.kvrouter.contract;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A connection to the Redis holding the view, standalone ({@code redis://host:port}) or Redis
 * Cluster ({@code redis-cluster://host:port[,host:port…]}, the seeds), with the same commands
 * either way. Lettuce with explicit timeouts and a bounded request queue; a standalone connection
 * rejects commands at once while disconnected, a cluster one queues them (bounded) while a node
 * connection opens.
 */
public final class ViewConnection implements AutoCloseable {

    public static final String CLUSTER_SCHEME = "redis-cluster://";

    /**
     * Reconnect attempts 50 ms apart at first, doubling to at most a second: Lettuce's default grows
     * to 30 s, so a connection to a Redis that restarted could wait that long after it answers.
     */
    private static final Delay RECONNECT_DELAY = Delay.exponential(Duration.ofMillis(50), Duration.ofSeconds(1), 2, TimeUnit.MILLISECONDS);

    private final AbstractRedisClient client;
    private final ClientResources resources;
    private final StatefulConnection<String, String> connection;
    private final RedisClusterCommands<String, String> sync;
    private final RedisClusterAsyncCommands<String, String> async;
    private final StatefulRedisClusterConnection<String, String> clusterConnection;

    private ViewConnection(AbstractRedisClient client, ClientResources resources, StatefulConnection<String, String> connection,
                           RedisClusterCommands<String, String> sync, RedisClusterAsyncCommands<String, String> async,
                           StatefulRedisClusterConnection<String, String> clusterConnection) {
        this.client = client;
        this.resources = resources;
        this.connection = connection;
        this.sync = sync;
        this.async = async;
        this.clusterConnection = clusterConnection;
    }

    public static boolean isCluster(String url) {
        return url.startsWith(CLUSTER_SCHEME);
    }

    /**
     * @param commandTimeout every command's timeout
     * @param connectTimeout connecting and the handshake (the first one also warms the JVM up)
     * @param requestQueue   commands queued per connection at most
     */
    public static ViewConnection open(String url, Duration commandTimeout, Duration connectTimeout, int requestQueue) {
        return open(url, RedisSecurity.none(), commandTimeout, connectTimeout, requestQueue);
    }

    /**
     * @param security       credentials and TLS for every node
     * @param commandTimeout every command's timeout
     * @param connectTimeout connecting and the handshake (the first one also warms the JVM up)
     * @param requestQueue   commands queued per connection at most
     * @throws RedisRefusedException when Redis refuses the credentials or the TLS handshake fails, saying what to set
     */
    public static ViewConnection open(String url, RedisSecurity security, Duration commandTimeout, Duration connectTimeout,
                                      int requestQueue) {
        SocketOptions socket = SocketOptions.builder().connectTimeout(connectTimeout).build();
        TimeoutOptions timeouts = TimeoutOptions.enabled(commandTimeout);
        ClientResources resources = DefaultClientResources.builder().reconnectDelay(RECONNECT_DELAY).build();
        if (isCluster(url)) {
            List<RedisURI> seeds = new ArrayList<>();
            for (String seed : url.substring(CLUSTER_SCHEME.length()).split(",")) {
                RedisURI uri = security.apply(RedisURI.create("redis://" + seed.trim()));
                uri.setTimeout(connectTimeout);
                seeds.add(uri);
            }
            RedisClusterClient cluster = RedisClusterClient.create(resources, seeds);
            cluster.setOptions(ClusterClientOptions.builder()
                    .autoReconnect(true)
                    // Node connections open lazily, on a node's first command: rejecting while
                    // disconnected would reject those. The queue bound and timeout still hold.
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.ACCEPT_COMMANDS)
                    .requestQueueSize(requestQueue)
                    .timeoutOptions(timeouts)
                    .socketOptions(socket)
                    .sslOptions(sslOptions(security))
                    .build());
            try {
                StatefulRedisClusterConnection<String, String> c = cluster.connect();
                return new ViewConnection(cluster, resources, c, c.sync(), c.async(), c);
            } catch (RuntimeException e) {
                cluster.shutdown();
                resources.shutdown();
                throw RedisRefusedException.explain(url, security, e);
            }
        }
        RedisURI uri = security.apply(RedisURI.create(url));
        // The handshake runs under the URI's timeout; commands under TimeoutOptions.
        uri.setTimeout(connectTimeout);
        RedisClient standalone = RedisClient.create(resources, uri);
        standalone.setOptions(ClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .requestQueueSize(requestQueue)
                .timeoutOptions(timeouts)
                .socketOptions(socket)
                .sslOptions(sslOptions(security))
                .build());
        try {
            StatefulRedisConnection<String, String> c = standalone.connect();
            return new ViewConnection(standalone, resources, c, c.sync(), c.async(), null);
        } catch (RuntimeException e) {
            standalone.shutdown();
            resources.shutdown();
            throw RedisRefusedException.explain(url, security, e);
        }
    }

    private static SslOptions sslOptions(RedisSecurity security) {
        SslOptions options = security.sslOptions();
        return options != null ? options : SslOptions.create();
    }

    public boolean cluster() {
        return clusterConnection != null;
    }

    public RedisClusterCommands<String, String> sync() {
        return sync;
    }

    public RedisClusterAsyncCommands<String, String> async() {
        return async;
    }

    /** Off: commands queue until {@link #flushCommands()} sends them in one write (pipelining). */
    public void setAutoFlushCommands(boolean autoFlush) {
        connection.setAutoFlushCommands(autoFlush);
    }

    public void flushCommands() {
        connection.flushCommands();
    }

    /** Loads (replacing) a function library: on a cluster, on every primary, since any may run it. */
    public void loadFunctions(String code) {
        if (clusterConnection != null) {
            clusterConnection.sync().upstream().commands().functionLoad(code, true);
        } else {
            sync.functionLoad(code, true);
        }
    }

    /**
     * Loads the view's library ({@link ViewLayout#functionLibrary()}) unless a later one is there: a
     * library of a later layout, or of the same layout and a later revision, loaded by a newer job,
     * is kept, and this says so (an older job replacing it would downgrade every balancer's routing).
     * On a cluster every primary is checked first, then loaded.
     *
     * @throws IllegalStateException naming both versions when a later library is loaded
     */
    public void loadViewFunctions() {
        int layout = ViewLayout.LAYOUT_VERSION;
        int revision = ViewLayout.libraryRevision();
        List<long[]> loaded = new java.util.ArrayList<>();
        if (clusterConnection != null) {
            for (var node : clusterConnection.getPartitions()) {
                if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                    loaded.add(loadedVersion(clusterConnection.getConnection(node.getNodeId()).sync()));
                }
            }
        } else {
            loaded.add(loadedVersion(sync));
        }
        for (long[] v : loaded) {
            if (v[0] > layout || v[0] == layout && v[1] > revision) {
                throw new IllegalStateException("Redis holds the kvrouter library of layout " + v[0] + ", revision " + v[1]
                        + ", later than this job's (layout " + layout + ", revision " + revision + "): a newer job loaded it. "
                        + "Not replacing it; run the newer job, or remove the library (FUNCTION DELETE kvrouter) to downgrade on purpose");
            }
        }
        loadFunctions(ViewLayout.functionLibrary());
    }

    /** {layout, revision} of the library loaded there; {0, 0} when none (or one from before revisions) is. */
    private static long[] loadedVersion(RedisClusterCommands<String, String> redis) {
        try {
            Long layout = redis.fcallReadOnly(ViewLayout.LAYOUT_FUNCTION, io.lettuce.core.ScriptOutputType.INTEGER);
            Long revision;
            try {
                revision = redis.fcallReadOnly(ViewLayout.REVISION_FUNCTION, io.lettuce.core.ScriptOutputType.INTEGER);
            } catch (io.lettuce.core.RedisCommandExecutionException e) {
                revision = 0L; // a library from before revisions
            }
            return new long[] {layout, revision};
        } catch (io.lettuce.core.RedisCommandExecutionException e) {
            if (e.getMessage() != null && e.getMessage().toLowerCase(java.util.Locale.ROOT).contains("function not found")) {
                return new long[] {0, 0};
            }
            throw e;
        }
    }

    /**
     * Which Redis answers: the server's {@code run_id} (a new one at every start), or on a cluster
     * the primaries' node ids, with the topology read again (a failover promotes a replica, which has
     * its own id). A change means the view there may lack writes it had.
     */
    public String serverIdentity() {
        if (clusterConnection != null) {
            ((RedisClusterClient) client).refreshPartitions();
            return clusterConnection.getPartitions().stream()
                    // Primaries that serve slots: a node demoted by a failover may still be flagged a moment.
                    .filter(n -> n.is(RedisClusterNode.NodeFlag.UPSTREAM) && !n.getSlots().isEmpty())
                    .map(RedisClusterNode::getNodeId).sorted()
                    .collect(java.util.stream.Collectors.joining(","));
        }
        return runId(sync.info("server"));
    }

    /** The {@code run_id} line of {@code INFO server}; empty when there is none. */
    static String runId(String info) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("run_id:")) {
                return line.substring("run_id:".length()).trim();
            }
        }
        return "";
    }

    /** Whether the function library is loaded: on a cluster, on every primary. */
    public boolean functionsLoaded(String library) {
        if (clusterConnection != null) {
            return clusterConnection.sync().upstream().commands().functionList(library).stream().noneMatch(List::isEmpty);
        }
        return !sync.functionList(library).isEmpty();
    }

    @Override
    public void close() {
        try {
            connection.close();
        } finally {
            // Resources passed in are not the client's to shut down: both go.
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            resources.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }
}
