package dev.kvrouter.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.metrics.ClassRatios;
import dev.kvrouter.metrics.WindowKind;
import dev.kvrouter.schemas.registry.RegistrySettings;
import dev.kvrouter.schemas.serde.RegistryAvroDeserializer;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.LocalStackExtension;
import dev.kvrouter.stack.junit.UniqueNames;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The README's first command, short: the job in a MiniCluster, the simulated fleet routed by the
 * view on the real stack, the live table, the report; and the ratios the pipeline published are
 * exactly what the simulator itself counted for the view's fleet.
 */
@ExtendWith(LocalStackExtension.class)
class DemoITCase {

    @Test
    void aShortDemoRunsEndToEndAndThePipelinesRatiosMatchTheSimulatorsCounts(StackAddresses stack, @TempDir Path dir)
            throws Exception {
        String run = UniqueNames.topic("demo-it");
        DemoCommand demo = new DemoCommand();
        // No failures: a killed engine's requests fail, which the two sides may count at different moments.
        new CommandLine(demo).parseArgs("--duration", "25s", "--engines", "3", "--failures", "", "--out", dir.toString(), "--run-id", run);
        ByteArrayOutputStream shown = new ByteArrayOutputStream();
        PrintStream stdout = System.out;
        int exit;
        System.setOut(new PrintStream(shown, true, StandardCharsets.UTF_8));
        try {
            exit = demo.run(stack, dir);
        } finally {
            System.setOut(stdout);
        }
        String screen = shown.toString(StandardCharsets.UTF_8);
        assertThat(exit).as(screen).isZero();
        assertThat(screen).contains("the four ratios per prefix class", "hit rate", "load Gini", "report: ");
        assertThat(dir.resolve("report.md")).exists();
        assertThat(dir.resolve("ratios.png")).exists();

        Map<String, long[]> simulated = new TreeMap<>(); // class -> {completed, hits}, the view's fleet
        List<String> rows = Files.readAllLines(dir.resolve("summary.csv"));
        for (String line : rows.subList(1, rows.size())) {
            String[] f = line.split(",");
            if (f[0].equals("view") && !f[1].equals("all")) {
                simulated.put(f[1], new long[] {Long.parseLong(f[3]), Long.parseLong(f[5])});
            }
        }
        assertThat(simulated).as("the mixed workload's classes").containsKeys("system-prompt", "chat", "one-shot");

        Map<String, long[]> published = new TreeMap<>(); // class -> {requests, hits}, summed over the tumbling windows
        try (KafkaConsumer<String, ClassRatios> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.kafkaBootstrap(),
                ConsumerConfig.GROUP_ID_CONFIG, UniqueNames.topic("it-demo-reader"),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, RegistryAvroDeserializer.class,
                RegistrySettings.URL, stack.schemaRegistryUrl()))) {
            consumer.subscribe(List.of(run + ".kvr.class-ratios"));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            long quietSince = System.nanoTime();
            // The job has stopped: read everything it published, until the topic stays quiet for 3 s.
            while (System.nanoTime() < deadline && System.nanoTime() - quietSince < Duration.ofSeconds(3).toNanos()) {
                var records = consumer.poll(Duration.ofMillis(200));
                if (!records.isEmpty()) {
                    quietSince = System.nanoTime();
                }
                records.forEach(r -> {
                    if (r.value().getWindowKind() == WindowKind.TUMBLING) {
                        long[] sums = published.computeIfAbsent(r.value().getPrefixClass(), k -> new long[2]);
                        sums[0] += r.value().getRequests();
                        sums[1] += r.value().getAffinityHits();
                    }
                });
            }
        }
        assertThat(published.keySet()).isEqualTo(simulated.keySet());
        simulated.forEach((cls, counts) -> {
            assertThat(published.get(cls)[0]).as("requests of class %s", cls).isEqualTo(counts[0]);
            assertThat(published.get(cls)[1]).as("hits of class %s", cls).isEqualTo(counts[1]);
        });
    }
}
