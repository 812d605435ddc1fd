package dev.kvrouter.redis;

import dev.kvrouter.contract.RedisSecurity;
import dev.kvrouter.contract.ViewConnection;
import dev.kvrouter.contract.ViewLayout;
import io.lettuce.core.RedisException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Notices a Redis that lost the view, so the job writes it again from its state (redis-sink
 * README, "Redis loss"). One look per call: the server restarted or failed over (its identity,
 * {@link ViewConnection#serverIdentity()}, changed); the meta key lost the {@value #RESYNCED_FIELD}
 * stamp this detector leaves there (the keys were flushed or expired: the sink rewrites its own meta
 * fields within a flush interval, so their absence is too brief to see); or the function library is
 * missing: loaded again here at once, so {@code kvr_pick} answers again without a job restart.
 * Single-threaded; the connection opens on the first look that finds Redis answering.
 */
public final class ViewLossDetector implements AutoCloseable {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ViewLossDetector.class);

    /** Meta field: when the view was last written again in full, milliseconds since the Unix epoch. */
    public static final String RESYNCED_FIELD = "resynced_ms";

    private final RedisViewSinkOptions options;
    private final ViewLayout layout;
    private ViewConnection connection;
    /** The identity of the Redis last answering; null before the first answer. */
    private String identity;
    private boolean stamped;
    private String lastFailure;
    /** Live reservations (placements balancers made that are not done or expired) at the last look; -1 before one answered. */
    private volatile long reservations = -1;

    public ViewLossDetector(RedisViewSinkOptions options) {
        this.options = options;
        this.layout = new ViewLayout(options.keyPrefix());
    }

    /**
     * Why the view must be written again, or empty. The first answer always asks for it: a job
     * that starts from a checkpoint holds entries the view may have lost while the job was down
     * (expired with the view's TTL, or a Redis restarted meanwhile). While Redis does not answer,
     * empty: the first look after it answers again sees whether it is still the same server.
     */
    public Optional<String> check() {
        try {
            if (connection == null) {
                // Reconnects by itself from here on; a standalone one fails commands at once meanwhile.
                connection = ViewConnection.open(options.redisUrl(), options.security(), Duration.ofMillis(options.commandTimeoutMs()),
                        Duration.ofMillis(options.connectTimeoutMs()), 64);
            }
            String now = connection.serverIdentity();
            boolean stampKept = connection.sync().hget(layout.metaKey(), RESYNCED_FIELD) != null;
            boolean library = connection.functionsLoaded(ViewLayout.FUNCTION_LIBRARY);
            if (!library) {
                connection.loadFunctions(ViewLayout.functionLibrary());
            }
            List<String> why = new ArrayList<>();
            if (identity == null) {
                why.add("the job started");
            } else if (!identity.equals(now)) {
                why.add("Redis restarted or failed over (" + identity + " -> " + now + ")");
            } else if (stamped && !stampKept) {
                why.add("the view's keys were flushed or expired");
            }
            if (!library) {
                why.add("the function library was missing (loaded again)");
            }
            if (!why.isEmpty()) {
                connection.sync().hset(layout.metaKey(), RESYNCED_FIELD, Long.toString(System.currentTimeMillis()));
                stamped = true;
            }
            reservations = connection.sync().hlen(layout.reservationsKey());
            // Only now: a look that failed half-way sees the same change again next time.
            identity = now;
            lastFailure = null;
            return why.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", why));
        } catch (RedisException e) {
            if (refusal(e)) {
                // Not Redis away but Redis refusing the job's user: no wait fixes that, and a probe that
                // cannot load the library leaves every balancer without kvr_pick. Failed, saying what to grant.
                throw new IllegalStateException("Redis refused the view probe (" + RedisSecurity.redactUrl(options.redisUrl()) + "): "
                        + e.getMessage() + ". The job's Redis user needs read and write on the view's keys (" + options.keyPrefix()
                        + "*) and FUNCTION LOAD, LIST and FCALL (ACL: ~" + options.keyPrefix() + "* +@all, or +@scripting beside "
                        + "+@read +@write +@hash +@keyspace); see README.md, \"Security\"", e);
            }
            // Said once per outage and kind of failure, not every second of it.
            if (!String.valueOf(e.getMessage()).equals(lastFailure)) {
                lastFailure = String.valueOf(e.getMessage());
                LOG.warn("cannot look at the view's Redis ({}): {}", RedisSecurity.redactUrl(options.redisUrl()), lastFailure);
            }
            return Optional.empty();
        }
    }

    /** Whether Redis refused the command or the login (ACL, password), anywhere in the cause chain: no retry fixes it. */
    static boolean refusal(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            String m = t.getMessage();
            if (m != null && (m.startsWith("NOPERM") || m.startsWith("WRONGPASS") || m.startsWith("NOAUTH") || m.contains(" NOPERM ")
                    || m.contains("WRONGPASS") || m.contains("NOAUTH"))) {
                return true;
            }
        }
        return false;
    }

    /** Live reservations in the view at the last look that answered (the job's kvr_view_reservations); -1 before one. */
    public long reservations() {
        return reservations;
    }

    @Override
    public void close() {
        if (connection != null) {
            connection.close();
            connection = null;
        }
    }
}
