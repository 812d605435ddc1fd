package dev.kvrouter.cli.demo;

import dev.kvrouter.alerts.Alert;
import dev.kvrouter.metrics.ClassRatios;
import dev.kvrouter.metrics.WindowKind;
import dev.kvrouter.schemas.registry.RegistrySettings;
import dev.kvrouter.schemas.serde.RegistryAvroDeserializer;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.topics.KafkaClients;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The demo's dashboard: reads the ratios and alerts topics and, each time a tumbling window of
 * ratios completes, prints the table of the four ratios per class with the latest alerts. On a
 * terminal the table replaces the previous one; otherwise tables follow each other.
 */
final class LiveRatios implements AutoCloseable {

    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss").withZone(ZoneId.systemDefault());
    private static final int ALERTS_SHOWN = 6;

    private final KafkaConsumer<String, Object> consumer;
    private final String ratiosTopic;
    private final Duration window;
    private final PrintStream out;
    private final boolean terminal = System.console() != null;
    private final Thread thread = new Thread(this::loop, "kvr-demo-ratios");
    private final Map<String, ClassRatios> latest = new TreeMap<>();
    private final Deque<String> alerts = new ArrayDeque<>();
    private volatile boolean running = true;
    private volatile long lastWindowEndMs;

    LiveRatios(StackAddresses stack, String ratiosTopic, String alertsTopic, Duration window, PrintStream out) {
        this.ratiosTopic = ratiosTopic;
        this.window = window;
        this.out = out;
        this.consumer = new KafkaConsumer<>(KafkaClients.serdeConfig(stack.client(), Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.kafkaBootstrap(),
                ConsumerConfig.GROUP_ID_CONFIG, "kvr-demo-dashboard-" + System.nanoTime(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, RegistryAvroDeserializer.class,
                RegistrySettings.URL, stack.schemaRegistryUrl())));
        consumer.subscribe(List.of(ratiosTopic, alertsTopic));
    }

    void start() {
        thread.setDaemon(true);
        thread.start();
    }

    /** Waits (at most {@code limit}) until a window that ends after {@code afterMs} has been shown. */
    void awaitWindowAfter(long afterMs, Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (lastWindowEndMs <= afterMs && System.nanoTime() < deadline) {
            Thread.sleep(200);
        }
    }

    private void loop() {
        while (running) {
            boolean newWindow = false;
            try {
                for (ConsumerRecord<String, Object> r : consumer.poll(Duration.ofMillis(500))) {
                    if (r.topic().equals(ratiosTopic) && r.value() instanceof ClassRatios c && c.getWindowKind() == WindowKind.TUMBLING) {
                        // Each window's figures replace the last; a class with no requests in it keeps its last row.
                        latest.put(c.getPrefixClass().toString(), c);
                        if (c.getWindowEndMs() > lastWindowEndMs) {
                            newWindow = true;
                        }
                    } else if (r.value() instanceof Alert a) {
                        alerts.addLast(String.format("%s %s %s", CLOCK.format(Instant.ofEpochMilli(a.getTsMs())),
                                a.getFiring() ? "FIRING " + a.getKind() + ":" : a.getKind() + ",", a.getMessage()));
                        while (alerts.size() > ALERTS_SHOWN) {
                            alerts.removeFirst();
                        }
                    }
                }
            } catch (org.apache.kafka.common.errors.WakeupException e) {
                return;
            } catch (RuntimeException e) {
                out.println("kvr demo: the ratios dashboard stopped: " + e.getMessage());
                return;
            }
            if (newWindow) {
                show();
            }
        }
    }

    private void show() {
        long end = latest.values().stream().mapToLong(ClassRatios::getWindowEndMs).max().orElse(0);
        StringBuilder screen = new StringBuilder();
        if (terminal) {
            screen.append("\033[H\033[2J");
        }
        screen.append(String.format("%nkv-router demo: the four ratios per prefix class, %d s window ending %s (routing view policy)%n%n",
                window.toSeconds(), CLOCK.format(Instant.ofEpochMilli(end))));
        screen.append(RatiosTable.render(latest.values()));
        screen.append(alerts.isEmpty() ? "\nalerts: none yet\n" : "\nalerts:\n  " + String.join("\n  ", alerts) + "\n");
        out.print(screen);
        out.flush();
        lastWindowEndMs = end;
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        consumer.wakeup();
        thread.join(5_000);
        consumer.close(Duration.ofSeconds(2));
    }
}
