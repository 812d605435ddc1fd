package dev.kvrouter.topics;

import dev.kvrouter.common.config.ClientConfig;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.errors.TimeoutException;

/**
 * What every kv-router Kafka client shares: the client config's security settings under the
 * component's own, and failures explained as an operator needs them (which service refused, what to
 * set), never with a secret.
 */
public final class KafkaClients {

    private static final String CONFIG = " in the client config (--client-config FILE or $" + ClientConfig.VARIABLE + ")";

    private KafkaClients() {}

    /** The client config's Kafka settings (security), then the component's own, which win. */
    public static Map<String, Object> config(ClientConfig client, Map<String, ?> own) {
        Map<String, Object> config = new HashMap<>(client.kafka());
        config.putAll(own);
        return config;
    }

    /**
     * Producer settings that deliver each partition's records once and in order, also to a topic
     * created a moment before: idempotent, acks=all, and one request in flight per broker. With more
     * in flight, a first request that meets NOT_LEADER_OR_FOLLOWER while the broker is still applying
     * the new partition can be overtaken by the next one, which the broker accepts; the first one's
     * retries then meet OUT_OF_ORDER_SEQUENCE_NUMBER until its delivery timeout, and its records are
     * lost (KAFKA-15591, fixed in brokers from 4.5; on 4.2 the bridge lost its first three batches so).
     */
    public static Map<String, Object> orderedDelivery() {
        return Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
    }

    /** Whether the failure is Kafka refusing the client (authentication, TLS, authorization). */
    public static boolean isRefusal(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof AuthenticationException || t instanceof AuthorizationException) {
                return true;
            }
        }
        return false;
    }

    /**
     * For a producer or consumer whose (de)serializer talks to the registry: the client config's Kafka
     * and registry settings, then the component's own.
     */
    public static Map<String, Object> serdeConfig(ClientConfig client, Map<String, ?> own) {
        Map<String, Object> config = new HashMap<>(client.kafkaWithRegistry());
        config.putAll(own);
        return config;
    }

    /**
     * A message for a Kafka client's failure: a refusal names what to set; a timeout says that a
     * secured cluster times out a client without its settings; otherwise the failure's own message.
     */
    public static String explain(String bootstrap, Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SslAuthenticationException) {
                return "Kafka at " + bootstrap + " refused the TLS handshake (" + t.getMessage() + "): check ssl.truststore.location"
                        + " (the brokers' CA) and, for mTLS, ssl.keystore.location" + CONFIG;
            }
            if (t instanceof SaslAuthenticationException) {
                return "Kafka at " + bootstrap + " refused the credentials (" + t.getMessage() + "): check sasl.mechanism and the"
                        + " user and password in sasl.jaas.config" + CONFIG;
            }
            if (t instanceof AuthenticationException) {
                return "Kafka at " + bootstrap + " refused the connection (" + t.getMessage() + "): check security.protocol and"
                        + " its settings" + CONFIG;
            }
            if (t instanceof AuthorizationException) {
                return "Kafka at " + bootstrap + " denied the operation (" + t.getMessage() + "): grant the client's user the ACLs"
                        + " the README lists";
            }
            if (t instanceof TimeoutException) {
                return "Kafka at " + bootstrap + " did not answer in time (" + t.getMessage() + "); a cluster that requires TLS"
                        + " or SASL does not answer a client without them: set security.protocol" + CONFIG;
            }
        }
        return "Kafka at " + bootstrap + ": " + failure;
    }
}
