package dev.kvrouter.contract;

import java.util.Locale;
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
        for (Throwable t = failure; t != null; t = t.getCause()) {
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
