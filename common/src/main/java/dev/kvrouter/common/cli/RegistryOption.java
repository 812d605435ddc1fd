package dev.kvrouter.common.cli;

import picocli.CommandLine.Option;

/** {@code --schema-registry URL}, default {@code $SCHEMA_REGISTRY_URL}. */
public final class RegistryOption extends ServiceOption {

    @Option(names = "--schema-registry", paramLabel = "URL",
            description = "Confluent-compatible schema registry URL (default: $SCHEMA_REGISTRY_URL, likewise).")
    String url;

    public RegistryOption() {
        super("--schema-registry URL", SCHEMA_REGISTRY_URL);
    }

    @Override
    protected String given() {
        return url;
    }
}
