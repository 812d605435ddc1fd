package dev.kvrouter.jobs.config;

import static dev.kvrouter.jobs.config.KvRouterJobOptions.CLIENT_CONFIG;

import dev.kvrouter.common.config.ClientConfig;
import dev.kvrouter.contract.RedisSecurity;
import dev.kvrouter.schemas.registry.RegistrySettings;
import java.io.Serializable;
import java.nio.file.Path;
import java.util.TreeMap;

/**
 * How the job's Kafka clients, registry clients and Redis connections authenticate, from the client
 * config file ({@code client-config}), resolved where the job is submitted: the secrets travel in
 * the job graph, as any Flink Kafka connector's properties do. Printed without a secret.
 *
 * @param kafka    Kafka client settings added to every source and sink
 * @param registry the registry client's settings (basic auth, TLS)
 * @param redis    Redis credentials and TLS
 */
public record SecuritySettings(TreeMap<String, String> kafka, TreeMap<String, String> registry, RedisSecurity redis)
        implements Serializable {

    static SecuritySettings read(OptionReader r) {
        String file = r.get(CLIENT_CONFIG);
        ClientConfig client = ClientConfig.none();
        if (!file.isBlank()) {
            try {
                client = ClientConfig.load(Path.of(file));
            } catch (IllegalArgumentException e) {
                r.problem(CLIENT_CONFIG.key() + ": " + e.getMessage());
            }
        }
        RedisSecurity redis = RedisSecurity.none();
        try {
            redis = RedisSecurity.fromConfig(client.redis());
        } catch (IllegalArgumentException e) {
            r.problem(CLIENT_CONFIG.key() + ": " + e.getMessage());
        }
        TreeMap<String, String> kafka = new TreeMap<>();
        client.kafka().forEach((k, v) -> kafka.put(k, v.toString()));
        return new SecuritySettings(kafka, new TreeMap<>(client.registry()), redis);
    }

    /** The registry client's settings for this registry URL. */
    public TreeMap<String, String> registryWith(String url) {
        TreeMap<String, String> settings = new TreeMap<>(registry);
        settings.put(RegistrySettings.URL, url);
        return settings;
    }

    @Override
    public String toString() {
        return "SecuritySettings[kafka=" + ClientConfig.redact(kafka) + ", registry=" + ClientConfig.redact(registry)
                + ", redis=" + redis + "]";
    }
}
