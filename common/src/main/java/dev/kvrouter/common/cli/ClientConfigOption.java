package dev.kvrouter.common.cli;

import dev.kvrouter.common.config.ClientConfig;
import java.nio.file.Path;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * {@code --client-config FILE}, default {@code $KVR_CLIENT_CONFIG}: the security settings for Kafka,
 * the registry and Redis ({@link ClientConfig}); none given, plaintext connections without credentials.
 */
public final class ClientConfigOption {

    static java.util.Map<String, String> environment = System.getenv();

    @Option(names = "--client-config", paramLabel = "FILE",
            description = "Client properties for secured Kafka, registry and Redis (SASL/TLS settings, credentials as "
                    + "${env:NAME} or ${file:PATH}); default: $" + ClientConfig.VARIABLE + ", which './kvr stack env' sets "
                    + "for a secure stack; none: plaintext without credentials.")
    Path file;

    /** The file: the flag's, else the variable's; empty when neither is set. */
    public Optional<Path> find() {
        if (file != null) {
            return Optional.of(file);
        }
        String fromEnvironment = environment.get(ClientConfig.VARIABLE);
        return fromEnvironment == null || fromEnvironment.isBlank() ? Optional.empty() : Optional.of(Path.of(fromEnvironment));
    }

    /** The settings; {@link ClientConfig#none()} when neither the flag nor the variable is set. */
    public ClientConfig load() {
        return find().map(ClientConfig::load).orElse(ClientConfig.none());
    }
}
