package dev.kvrouter.common.cli;

import picocli.CommandLine.Mixin;

/**
 * The Avro topics a command reads or writes: {@code --bootstrap}, {@code --schema-registry},
 * {@code --topics-prefix} and {@code --client-config}, which always go together
 * ({@code @Mixin AvroTopicsOptions topics;}).
 */
public final class AvroTopicsOptions {

    @Mixin
    public KafkaOption kafka;

    @Mixin
    public RegistryOption registry;

    @Mixin
    TopicsPrefixOption topicsPrefix;

    @Mixin
    public ClientConfigOption clientConfig;

    /** The prefix of every topic name ("" for none). */
    public String prefix() {
        return topicsPrefix.value();
    }

    /** Fails naming each of Kafka and the registry that is not set, not only the first. */
    public void requireServices() {
        ServiceOption.requireAll(kafka, registry);
    }
}
