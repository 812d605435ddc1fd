package dev.kvrouter.gateway;

import dev.kvrouter.common.TopicNames;
import dev.kvrouter.common.config.ClientConfig;
import dev.kvrouter.dlq.DeadLetter;
import dev.kvrouter.schemas.DeadLetters;
import dev.kvrouter.schemas.registry.RegistrySettings;
import dev.kvrouter.schemas.serde.RegistryAvroSerializer;
import dev.kvrouter.topics.KafkaClients;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Ships the gateway's access log to {@code kvr.routing-decisions} and {@code kvr.request-outcomes}
 * (what the simulator's balancers publish), so that the ratios, the alerts, {@code ./kvr explain}
 * and the job see requests placed by nginx. A line that cannot be read goes to
 * {@code kvr.dead-letter} with the reason.
 *
 * <p>Nothing is lost across restarts: the position (the file's identity and the byte offset after
 * the last line shipped) is saved only after Kafka acknowledged everything before it, so a restart
 * ships from there (a line may go twice; never not at all). A log rotated the logrotate way (renamed
 * to {@code <log>.1}, nginx reopened on USR1) is finished from the saved offset before the new one
 * is read; a log truncated in place is read again from its start. Bounded: it reads at most
 * {@link #CHUNK_BYTES} at a time, and a line longer than {@code maxLineBytes} goes to the dead-letter
 * topic, cut, instead of being buffered.
 */
public final class AccessLogShipper implements AutoCloseable {

    static final int CHUNK_BYTES = 1 << 20;
    static final String DEAD_LETTER_STAGE = "gateway-access-log";

    private final Path log;
    private final Path positionFile;
    private final String model;
    private final int maxLineBytes;
    private final String decisionsTopic;
    private final String outcomesTopic;
    private final String deadLetterTopic;
    private final KafkaProducer<String, Object> producer;
    private final AtomicReference<Exception> failure = new AtomicReference<>();
    private long decisions;
    private long outcomes;
    private long deadLetters;

    /**
     * @param log          the access log nginx writes (log_format kvr)
     * @param positionFile where the shipped position is kept between runs
     * @param model        the model name the decisions carry
     */
    public AccessLogShipper(Path log, Path positionFile, String bootstrap, String registryUrl, String topicsPrefix, String model,
                            ClientConfig client, int maxLineBytes) {
        if (maxLineBytes < 1024 || maxLineBytes > CHUNK_BYTES) {
            throw new IllegalArgumentException("max line bytes: 1024 to " + CHUNK_BYTES + ", got " + maxLineBytes);
        }
        this.log = log;
        this.positionFile = positionFile;
        this.model = model;
        this.maxLineBytes = maxLineBytes;
        this.decisionsTopic = topicsPrefix + TopicNames.ROUTING_DECISIONS;
        this.outcomesTopic = topicsPrefix + TopicNames.REQUEST_OUTCOMES;
        this.deadLetterTopic = topicsPrefix + TopicNames.DEAD_LETTER;
        Map<String, Object> config = KafkaClients.serdeConfig(client, Map.of());
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, RegistryAvroSerializer.class);
        config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        config.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd");
        config.putAll(KafkaClients.orderedDelivery());
        config.put(RegistrySettings.URL, registryUrl);
        this.producer = new KafkaProducer<>(config);
    }

    /** Where shipping stands: the log file's identity and the offset after the last line shipped. */
    record Position(String fileKey, long offset) {
        static Position read(Path file) {
            try {
                String[] parts = Files.readString(file).trim().split(" ");
                return new Position(parts[0], Long.parseLong(parts[1]));
            } catch (NoSuchFileException e) {
                return new Position("", 0);
            } catch (IOException | RuntimeException e) {
                throw new IllegalStateException("the shipper's position file " + file + " is unreadable (" + e.getMessage()
                        + "); delete it to ship the log from its start", e);
            }
        }

        void write(Path file) throws IOException {
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            Files.writeString(tmp, fileKey + " " + offset + "\n");
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        }
    }

    private static String fileKey(Path file) throws IOException {
        return String.valueOf(Files.readAttributes(file, BasicFileAttributes.class).fileKey());
    }

    /**
     * Ships every complete line written since the saved position and saves the new one; returns the
     * lines read (shipped or dead-lettered). Call it again and again (every 200 ms, say) to follow the log.
     */
    public int shipAvailable() throws IOException {
        Position at = Position.read(positionFile);
        int lines = 0;
        if (!Files.exists(log)) {
            return 0;
        }
        String current = fileKey(log);
        if (!at.fileKey().isEmpty() && !at.fileKey().equals(current)) {
            // Rotated: finish the old file (renamed to <log>.1) from the saved offset, then the new one from 0.
            Path rotated = log.resolveSibling(log.getFileName() + ".1");
            if (Files.exists(rotated) && fileKey(rotated).equals(at.fileKey())) {
                lines += ship(rotated, at.fileKey(), at.offset(), true);
            }
            at = new Position(current, 0);
        }
        lines += ship(log, current, at.fileKey().isEmpty() ? 0 : at.offset(), false);
        return lines;
    }

    /** Ships the file's complete lines from {@code offset}; saves the position after each chunk Kafka acknowledged. */
    private int ship(Path file, String key, long offset, boolean rotated) throws IOException {
        int lines = 0;
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            if (channel.size() < offset) {
                offset = 0; // truncated in place: read again from its start
            }
            ByteBuffer buffer = ByteBuffer.allocate(CHUNK_BYTES);
            long position = offset;
            while (true) {
                buffer.clear();
                int read = channel.read(buffer, position);
                if (read <= 0) {
                    break;
                }
                byte[] bytes = new byte[read];
                buffer.flip();
                buffer.get(bytes);
                int start = 0;
                int consumed = 0;
                for (int i = 0; i < read; i++) {
                    if (bytes[i] == '\n') {
                        lines++;
                        line(bytes, start, i, file, position + start);
                        start = i + 1;
                        consumed = start;
                    }
                }
                if (consumed == 0) {
                    // No newline in a whole chunk: a line over the bound, filed cut, skipped to its end.
                    if (read >= maxLineBytes) {
                        consumed = skipLongLine(channel, position, bytes, file);
                        lines++;
                    } else {
                        break; // a line still being written
                    }
                }
                position += consumed;
                flush();
                new Position(key, position).write(positionFile);
            }
            if (rotated) {
                new Position(fileKey(log), 0).write(positionFile);
            }
        }
        return lines;
    }

    private int skipLongLine(FileChannel channel, long start, byte[] head, Path file) throws IOException {
        deadLetter(head, file, start, "a line over " + maxLineBytes + " bytes (kept cut)", null);
        ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
        long p = start + head.length;
        while (true) {
            buffer.clear();
            int read = channel.read(buffer, p);
            if (read <= 0) {
                return (int) (p - start); // (the line's end is not written yet: it is skipped as far as it goes)
            }
            for (int i = 0; i < read; i++) {
                if (buffer.get(i) == '\n') {
                    return (int) (p + i + 1 - start);
                }
            }
            p += read;
        }
    }

    private void line(byte[] bytes, int from, int to, Path file, long offset) {
        if (to == from) {
            return;
        }
        if (to - from > maxLineBytes) {
            deadLetter(java.util.Arrays.copyOfRange(bytes, from, to), file, offset, "a line over " + maxLineBytes + " bytes", null);
            return;
        }
        String text = new String(bytes, from, to - from, StandardCharsets.UTF_8);
        AccessLogLine parsed;
        try {
            parsed = AccessLogLine.parse(text, model);
        } catch (IllegalArgumentException e) {
            deadLetter(text.getBytes(StandardCharsets.UTF_8), file, offset, e.getMessage(), e);
            return;
        }
        send(decisionsTopic, parsed.decision().getRequestId(), parsed.decision());
        decisions++;
        if (parsed.outcome() != null) {
            send(outcomesTopic, parsed.outcome().getRequestId(), parsed.outcome());
            outcomes++;
        }
    }

    private void deadLetter(byte[] value, Path file, long offset, String reason, Exception error) {
        DeadLetter letter = DeadLetters.of(null, value).setSourceTopic(file.toString()).setSourcePartition(-1).setSourceOffset(offset)
                .setStage(DEAD_LETTER_STAGE).setReason("access log line at byte " + offset + ": " + reason)
                .setErrorClass(error == null ? null : error.getClass().getName()).setTsMs(System.currentTimeMillis()).build();
        send(deadLetterTopic, file.toString(), letter);
        deadLetters++;
    }

    private void send(String topic, String key, Object value) {
        producer.send(new ProducerRecord<>(topic, key, value), (meta, e) -> {
            if (e != null) {
                failure.compareAndSet(null, e);
            }
        });
    }

    /** Waits for every record sent; a failed send stops the shipper before its position moves past it. */
    private void flush() {
        producer.flush();
        Exception e = failure.get();
        if (e != null) {
            throw new IllegalStateException("a send to Kafka failed, the position stays before it: " + e.getMessage(), e);
        }
    }

    public long decisions() {
        return decisions;
    }

    public long outcomes() {
        return outcomes;
    }

    public long deadLetters() {
        return deadLetters;
    }

    @Override
    public void close() {
        producer.close();
    }

    @Override
    public String toString() {
        return "AccessLogShipper[" + log + "]";
    }
}
