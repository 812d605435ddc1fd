package dev.kvrouter.contract;

import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import javax.net.ssl.SSLException;

/**
 * Redis would not let the client in: it refused the credentials (or asked for some), or the TLS
 * handshake failed. The message names the Redis and the client config keys to set; it never holds
 * a secret.
 */
public final class RedisRefusedException extends RuntimeException {

    private RedisRefusedException(String message, Throwable cause) {
        super(message, cause);
    }

    /** The failure of a first connect, explained when it is a refusal; otherwise as it was. */
    static RuntimeException explain(String url, RedisSecurity security, RuntimeException failure) {
        String where = "Redis at " + RedisSecurity.redactUrl(url);
        String how = " (client config: --client-config FILE or $KVR_CLIENT_CONFIG)";
        // A cluster's connect reports each seed's failure as a suppressed exception: look there too.
        Deque<Throwable> pending = new ArrayDeque<>(List.of(failure));
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        while (!pending.isEmpty() && seen.size() < 64) {
            Throwable t = pending.poll();
            if (!seen.add(t)) {
                continue;
            }
            if (t.getCause() != null) {
                pending.add(t.getCause());
            }
            pending.addAll(List.of(t.getSuppressed()));
            String m = String.valueOf(t.getMessage());
            String upper = m.toUpperCase(Locale.ROOT);
            if (upper.startsWith("NOAUTH") || upper.contains("NOAUTH ")) {
                return new RedisRefusedException(where + " requires authentication: set " + RedisSecurity.USER + " and "
                        + RedisSecurity.PASSWORD + how, failure);
            }
            if (upper.startsWith("WRONGPASS") || upper.contains("WRONGPASS ") || upper.contains("INVALID PASSWORD")) {
                return new RedisRefusedException(where + " refused the credentials of user '"
                        + (security.user() == null ? "default" : security.user()) + "': check " + RedisSecurity.USER + " and "
                        + RedisSecurity.PASSWORD + how, failure);
            }
            if (t instanceof SSLException) {
                return new RedisRefusedException(where + ": the TLS handshake failed (" + t.getClass().getSimpleName()
                        + "): check " + RedisSecurity.SSL + " and " + RedisSecurity.TRUSTSTORE_LOCATION + how, failure);
            }
        }
        return failure;
    }
}
