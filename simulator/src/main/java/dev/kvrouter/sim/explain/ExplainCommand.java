package dev.kvrouter.sim.explain;

import dev.kvrouter.common.cli.AvroTopicsOptions;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RoutingDecision;
import dev.kvrouter.schemas.registry.RegistrySettings;
import dev.kvrouter.schemas.serde.RegistryAvroDeserializer;
import dev.kvrouter.sim.sink.KafkaEventSink;
import dev.kvrouter.topics.KafkaClients;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code kvr explain --topics-prefix P}: what a run's tail is made of, read back from its decisions and outcomes topics. */
@Command(name = "explain", mixinStandardHelpOptions = true,
        description = {"Read a run's routing decisions and request outcomes back from Kafka (from the beginning to the end they had "
                + "when the command started), join them by request id and print what the TTFT tail is made of: requests per route "
                + "reason, the slowest share by reason, class and engine, the slowest requests one by one, and optionally every "
                + "request of a time window. A demo or sim run prints its topic prefix ('topics demo-xxxx.*').", ""})
public final class ExplainCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    AvroTopicsOptions topics;

    @Option(names = "--worst", defaultValue = "1", description = "The slowest share to break down, in percent (default: ${DEFAULT-VALUE}).")
    double worstPercent;

    @Option(names = "--slowest", defaultValue = "30", description = "How many of the slowest requests to list one by one (default: ${DEFAULT-VALUE}).")
    int slowest;

    @Option(names = "--from", description = "List every request decided from this second of the run (with --to).")
    Double fromSeconds;

    @Option(names = "--to", description = "... to this second.")
    Double toSeconds;

    @Option(names = "--class", description = "Only requests of this prefix class (e.g. burst).")
    String prefixClass;

    @Option(names = "--engine", description = "With --from/--to: only this engine's requests, and its load reports in the window.")
    String engine;

    @Option(names = "--csv", description = "Print every request (decision joined to outcome) as CSV instead of the report.")
    boolean csv;

    @Option(names = "--read-timeout", defaultValue = "120", description = "Give up reading after this many seconds (default: ${DEFAULT-VALUE}).")
    int readTimeoutSeconds;

    @Override
    public Integer call() {
        TailReport.Settings settings = new TailReport.Settings(worstPercent, slowest, fromSeconds == null ? Double.NaN : fromSeconds,
                toSeconds == null ? Double.NaN : toSeconds, prefixClass, engine);
        KafkaEventSink.Topics names = KafkaEventSink.Topics.withPrefix(topics.prefix());
        topics.requireServices();
        Map<String, Object> config = KafkaClients.serdeConfig(topics.clientConfig.load(), Map.of());
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, topics.kafka.value());
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, RegistryAvroDeserializer.class);
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        config.put(RegistrySettings.URL, topics.registry.value());
        List<RoutingDecision> decisions = new ArrayList<>();
        List<RequestOutcome> outcomes = new ArrayList<>();
        List<EngineLoad> loads = new ArrayList<>();
        try (KafkaConsumer<String, Object> consumer = new KafkaConsumer<>(config)) {
            List<TopicPartition> partitions = new ArrayList<>();
            List<String> read = engine == null ? List.of(names.decisions(), names.outcomes())
                    : List.of(names.decisions(), names.outcomes(), names.engineLoad());
            for (String topic : read) {
                var info = consumer.partitionsFor(topic, Duration.ofSeconds(30));
                if (info == null || info.isEmpty()) {
                    String prefix = topics.prefix();
                    // A run prints 'topics demo-xxxx.*': the dot belongs to the prefix, and is easy to leave out.
                    String hint = !prefix.isEmpty() && !prefix.endsWith(".") ? "; did you mean --topics-prefix " + prefix + ". (with the dot)?"
                            : "";
                    throw new IllegalArgumentException("no topic " + topic + " on " + config.get(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG)
                            + ": check --topics-prefix (a run prints 'topics <prefix>*')" + hint);
                }
                info.forEach(p -> partitions.add(new TopicPartition(p.topic(), p.partition())));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            long deadline = System.nanoTime() + Duration.ofSeconds(readTimeoutSeconds).toNanos();
            // Bounded: stops at the end offsets seen at the start, or at the deadline with what it has.
            while (!reached(consumer, end)) {
                if (System.nanoTime() > deadline) {
                    spec.commandLine().getErr().println("kvr explain: read timed out after " + readTimeoutSeconds + " s; reporting what was read");
                    break;
                }
                for (ConsumerRecord<String, Object> r : consumer.poll(Duration.ofMillis(500))) {
                    if (r.value() instanceof RoutingDecision d) {
                        decisions.add(d);
                    } else if (r.value() instanceof RequestOutcome o) {
                        outcomes.add(o);
                    } else if (r.value() instanceof EngineLoad l && engine.equals(l.getEngineId())) {
                        loads.add(l);
                    }
                }
            }
        }
        var out = spec.commandLine().getOut();
        List<TailReport.Request> joined = TailReport.join(decisions, outcomes);
        out.print(csv ? TailReport.csv(joined) : TailReport.render(joined, loads, settings));
        out.flush(); // picocli's writer flushes itself only on println
        return 0;
    }

    private static boolean reached(KafkaConsumer<String, Object> consumer, Map<TopicPartition, Long> end) {
        for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            if (consumer.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }
}
