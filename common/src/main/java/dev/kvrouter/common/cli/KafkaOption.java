package dev.kvrouter.common.cli;

import picocli.CommandLine.Option;

/** {@code --bootstrap HOST:PORT}, default {@code $KAFKA_BOOTSTRAP}. */
public final class KafkaOption extends ServiceOption {

    @Option(names = "--bootstrap", paramLabel = "HOST:PORT",
            description = "Kafka bootstrap servers (default: $KAFKA_BOOTSTRAP, set by './kvr' from a running './kvr stack').")
    String bootstrap;

    public KafkaOption() {
        super("--bootstrap HOST:PORT", KAFKA_BOOTSTRAP);
    }

    @Override
    protected String given() {
        return bootstrap;
    }
}
