package dev.kvrouter.common;

import java.util.List;

/**
 * The roles that write and read kv-router's topics (each topic's {@code writers} and {@code readers}
 * in kvr-topics.yaml), and so the principals Kafka ACLs are granted to.
 */
public final class KafkaRoles {

    /** The engines' KV events and load, through the bridge or from the engines themselves. */
    public static final String BRIDGE = "bridge";
    /** Routing decisions and request outcomes: the gateway's shipper, a Java balancer, the simulator. */
    public static final String BALANCER = "balancer";
    /** The kv-router job. */
    public static final String JOB = "job";
    public static final List<String> ALL = List.of(BRIDGE, BALANCER, JOB);

    private KafkaRoles() {}
}
