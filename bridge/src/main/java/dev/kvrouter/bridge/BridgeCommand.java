package dev.kvrouter.bridge;

import dev.kvrouter.common.cli.AvroTopicsOptions;
import dev.kvrouter.common.TopicNames;
import picocli.CommandLine.Mixin;
import dev.kvrouter.common.Durations;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code kvr bridge --config FILE}: vLLM/SGLang KV events (ZMQ) and metrics (Prometheus) to the kv-router topics. */
@Command(name = "bridge", mixinStandardHelpOptions = true,
        description = {"Follow vLLM/SGLang engines' KV event publishers (ZMQ, msgpack) and Prometheus metrics and produce "
                + "KvEventBatch and EngineLoad records to Kafka. Kafka and the registry default to the running './kvr stack' "
                + "(or $KAFKA_BOOTSTRAP, $SCHEMA_REGISTRY_URL). The engines file is re-read while running. Stops on Ctrl-C "
                + "or after --duration. See bridge/README.md."},
        subcommands = {BridgeBench.Command.class})
public final class BridgeCommand implements Callable<Integer> {

    CommandSpec spec;

    /** Injected when the command is built: the settings list goes under --help, from the settings themselves. */
    @Spec
    void spec(CommandSpec spec) {
        this.spec = spec;
        spec.usageMessage().footer("", BridgeConfig.help());
    }

    @Option(names = "--config", paramLabel = "FILE", description = "The engines file (YAML): id, model, events, replay, metrics, data-parallel-size per engine.")
    Path config;

    @Mixin
    AvroTopicsOptions topics;

    @Option(names = "-D", paramLabel = "NAME=VALUE", description = "A setting; see the list below.")
    Map<String, String> settings = new LinkedHashMap<>();

    @Option(names = "--duration", paramLabel = "DURATION", description = "Stop after this long, e.g. 90s or 10m (default: run until Ctrl-C).")
    String duration;

    public static void main(String[] args) {
        System.exit(new CommandLine(new BridgeCommand()).execute(args));
    }

    /** Settings from the options (each flag or, not given, its environment variable), then the -D settings. */
    static Map<String, String> settings(Path config, String bootstrap, String registry, String prefix, Path clientConfig,
                                        Map<String, String> extra) {
        Map<String, String> s = new LinkedHashMap<>();
        putIfPresent(s, BridgeConfig.CLIENT_CONFIG.name(), clientConfig == null ? null : clientConfig.toString());
        putIfPresent(s, BridgeConfig.KAFKA_BOOTSTRAP.name(), bootstrap);
        putIfPresent(s, BridgeConfig.SCHEMA_REGISTRY_URL.name(), registry);
        putIfPresent(s, BridgeConfig.TOPIC_PREFIX.name(), prefix);
        putIfPresent(s, BridgeConfig.ENGINES_FILE.name(), config == null ? null : config.toString());
        s.putAll(extra);
        return s;
    }

    private static void putIfPresent(Map<String, String> s, String key, String value) {
        if (value != null && !value.isBlank()) {
            s.put(key, value);
        }
    }

    @Override
    public Integer call() throws Exception {
        if (config == null) {
            throw new CommandLine.ParameterException(spec.commandLine(), "Missing required option: '--config=FILE' (the engines file)");
        }
        BridgeConfig bridgeConfig = BridgeConfig.from(settings(config, topics.kafka.find().orElse(null), topics.registry.find().orElse(null),
                topics.prefix(), topics.clientConfig.find().orElse(null), settings));
        Bridge.checkTopics(bridgeConfig, Duration.ofSeconds(15));
        CountDownLatch stopped = new CountDownLatch(1);
        Bridge bridge = Bridge.start(bridgeConfig, System.out::println);
        Thread stop = new Thread(() -> {
            bridge.close();
            stopped.countDown();
        }, "kvr-bridge-stop");
        Runtime.getRuntime().addShutdownHook(stop);
        System.out.printf("kvr bridge: %d engine(s) from %s -> %s, %s (%s); %s%n", bridge.engines().size(), config,
                bridgeConfig.topic(TopicNames.KV_EVENTS), bridgeConfig.topic(TopicNames.ENGINE_LOAD), bridgeConfig.kafkaBootstrap(),
                duration == null ? "Ctrl-C stops it" : "stopping after " + duration);
        if (duration == null) {
            stopped.await();
            return 0;
        }
        Duration limit = Durations.parse(duration);
        stopped.await(limit.toMillis(), TimeUnit.MILLISECONDS);
        Runtime.getRuntime().removeShutdownHook(stop);
        bridge.close();
        return 0;
    }
}
