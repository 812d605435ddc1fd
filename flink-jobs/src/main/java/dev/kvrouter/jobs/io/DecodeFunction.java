package dev.kvrouter.jobs.io;

import dev.kvrouter.dlq.DeadLetter;
import dev.kvrouter.jobs.io.RawRecord;
import dev.kvrouter.schemas.DeadLetters;
import dev.kvrouter.schemas.registry.RegistrySettings;
import dev.kvrouter.schemas.registry.SchemaRegistryException;
import dev.kvrouter.schemas.serde.RegistryAvroDeserializer;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Decodes raw Kafka records (Confluent wire format) into {@code T} and checks them. Anything that
 * does not decode, is of another type, or fails the checks goes whole to the dead-letter output
 * with the reason and its topic/partition/offset; the job keeps running.
 */
public final class DecodeFunction<T> extends ProcessFunction<RawRecord, T> {

    public static final OutputTag<DeadLetter> DEAD_LETTERS = new OutputTag<>("dead-letters") {};

    /** A check of a decoded record: empty when it is fine, else the reason. */
    @FunctionalInterface
    public interface Check<T> extends java.io.Serializable {
        Optional<String> problem(T record);
    }

    /**
     * How a record's bytes become a value: a deserializer made once per task and closed with it. The
     * job reads the Confluent wire format against the registry ({@link #registry}); a test of a
     * workflow on its own inputs may read plain Avro, with no registry.
     */
    @FunctionalInterface
    public interface Decoder extends java.io.Serializable {
        Deserializer<Object> open();
    }

    /** The Confluent wire format, the writer's schema from the registry at {@code url}. */
    public static Decoder registry(String url) {
        return registry(new TreeMap<>(Map.of(RegistrySettings.URL, url)));
    }

    /** A decoder reading the registry with these client settings (its URL, credentials, TLS). */
    public static Decoder registry(TreeMap<String, String> registryConfig) {
        return () -> {
            RegistryAvroDeserializer<Object> d = new RegistryAvroDeserializer<>();
            d.configure(registryConfig, false);
            return d;
        };
    }

    /** The dead-letter metric's reasons: no value, not Avro of a known schema, another record type, failed its checks. */
    static final String TOMBSTONE = "tombstone";
    static final String UNDECODABLE = "undecodable";
    static final String WRONG_TYPE = "wrong_type";
    static final String INVALID = "invalid";

    private final Class<T> type;
    private final Decoder decoder;
    private final Check<T> check;
    private transient Deserializer<Object> deserializer;
    /** Dead letters by why, {@code kvr_dead_letters_total{reason=...}}: a bounded set of reasons (the message goes to the record). */
    private transient Map<String, Counter> deadLetters;

    public DecodeFunction(Class<T> type, Decoder decoder, Check<T> check) {
        this.type = type;
        this.decoder = decoder;
        this.check = check;
    }

    @Override
    public void open(OpenContext openContext) {
        deserializer = decoder.open();
        deadLetters = new java.util.HashMap<>();
        for (String reason : List.of(TOMBSTONE, UNDECODABLE, WRONG_TYPE, INVALID)) {
            deadLetters.put(reason, getRuntimeContext().getMetricGroup().addGroup("reason", reason).counter("kvr_dead_letters_total"));
        }
    }

    @Override
    public void processElement(RawRecord raw, Context ctx, Collector<T> out) {
        Object decoded;
        try {
            if (raw.value == null) {
                reject(raw, TOMBSTONE, "decode", "tombstone (null value): no event", null, ctx);
                return;
            }
            decoded = deserializer.deserialize(raw.topic, raw.value);
        } catch (RuntimeException e) {
            if (registryDidNotJudge(e)) {
                // Not the record's fault: fail the task, so it restarts from the last checkpoint (the
                // job's exponential back-off, up to a minute apart, each failure logged with the
                // registry's answer) and reads the record again once the registry answers. Nothing is
                // lost or misfiled, and no offset moves past it.
                throw e;
            }
            reject(raw, UNDECODABLE, "decode", e.getMessage(), e, ctx);
            return;
        }
        if (!type.isInstance(decoded)) {
            reject(raw, WRONG_TYPE, "decode", "expected a " + type.getSimpleName() + ", the record is a "
                    + (decoded == null ? "null" : decoded.getClass().getName()), null, ctx);
            return;
        }
        T record = type.cast(decoded);
        Optional<String> problem = check.problem(record);
        if (problem.isPresent()) {
            reject(raw, INVALID, "validate", problem.get(), null, ctx);
            return;
        }
        out.collect(record);
    }

    /**
     * The registry said nothing about the record: it could not be asked (unreachable, a server error)
     * or it refused us (401 credentials, 403 permissions, 408 timeout, 429 rate limit). A retry may
     * succeed; the record may be good.
     */
    static boolean registryDidNotJudge(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SchemaRegistryException.Unreachable
                    || t instanceof SchemaRegistryException r && refusedUs(r.httpStatus())) {
                return true;
            }
        }
        return false;
    }

    private static boolean refusedUs(int httpStatus) {
        return httpStatus >= 500 || httpStatus == 401 || httpStatus == 403 || httpStatus == 408 || httpStatus == 429;
    }

    private void reject(RawRecord raw, String metricReason, String stage, String reason, Exception error, Context ctx) {
        deadLetters.get(metricReason).inc();
        ctx.output(DEAD_LETTERS, DeadLetters.of(raw.key, raw.value)
                .setSourceTopic(raw.topic).setSourcePartition(raw.partition).setSourceOffset(raw.offset)
                .setStage(stage).setReason(reason == null ? "unknown" : reason)
                .setErrorClass(error == null ? null : error.getClass().getName())
                .setTsMs(System.currentTimeMillis())
                .build());
    }

    @Override
    public void close() {
        if (deserializer != null) {
            deserializer.close();
        }
    }
}
