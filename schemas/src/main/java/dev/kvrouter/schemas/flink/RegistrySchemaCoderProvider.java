package dev.kvrouter.schemas.flink;

import dev.kvrouter.schemas.registry.RegistrySettings;
import dev.kvrouter.schemas.registry.SchemaRegistryClient;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.formats.avro.SchemaCoder;

/**
 * Serializable recipe for a {@link RegistrySchemaCoder}: shipped with the job graph, it builds the
 * registry client on the task manager. Settings are validated when the provider is made, on the
 * client, so a wrong URL fails the submission rather than every task.
 */
public final class RegistrySchemaCoderProvider implements SchemaCoder.SchemaCoderProvider {

    private static final long serialVersionUID = 1L;

    private final HashMap<String, String> registryConfig;
    private final String subject;
    private final boolean autoRegister;

    private RegistrySchemaCoderProvider(Map<String, String> registryConfig, String subject, boolean autoRegister) {
        RegistrySettings.fromConfig(registryConfig);
        this.registryConfig = new HashMap<>(registryConfig);
        this.subject = subject;
        this.autoRegister = autoRegister;
    }

    /** Writes (auto-registering) and reads values of {@code topic} under subject {@code <topic>-value}. */
    public static RegistrySchemaCoderProvider forTopicValue(Map<String, String> registryConfig, String topic) {
        return new RegistrySchemaCoderProvider(registryConfig, topic + "-value", true);
    }

    /** Only reads: the writer's schema comes from the id in each message. */
    public static RegistrySchemaCoderProvider forReading(Map<String, String> registryConfig) {
        return new RegistrySchemaCoderProvider(registryConfig, null, false);
    }

    @Override
    public SchemaCoder get() {
        return new RegistrySchemaCoder(new SchemaRegistryClient(RegistrySettings.fromConfig(registryConfig)), subject, autoRegister);
    }
}
