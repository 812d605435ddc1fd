package dev.kvrouter.jobs.view;

import dev.kvrouter.jobs.config.KvRouterJobConfig;
import java.util.HashMap;
import java.util.Map;

/** Configurations for operator tests: the required addresses (never contacted) plus overrides. */
public final class TestConfigs {

    private TestConfigs() {}

    public static KvRouterJobConfig with(String... keyValues) {
        Map<String, String> m = new HashMap<>(Map.of(
                "kafka.bootstrap", "127.0.0.1:9",
                "schema-registry.url", "http://127.0.0.1:9",
                "redis.url", "redis://127.0.0.1:9"));
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put(keyValues[i], keyValues[i + 1]);
        }
        return KvRouterJobConfig.from(m);
    }
}
