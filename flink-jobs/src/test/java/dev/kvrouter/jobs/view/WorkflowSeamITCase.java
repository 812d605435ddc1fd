package dev.kvrouter.jobs.view;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.alerts.Alert;
import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.common.TopicNames;
import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.dlq.DeadLetter;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.EngineStateChange;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RoutingDecision;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.jobs.io.DecodeFunction;
import dev.kvrouter.jobs.io.RawRecord;
import dev.kvrouter.jobs.ratios.RatiosWorkflow;
import dev.kvrouter.jobs.view.model.ViewResync;
import dev.kvrouter.metrics.ClassRatios;
import dev.kvrouter.redis.ViewWrite;
import dev.kvrouter.replicas.ReplicationRecommendation;
import dev.kvrouter.view.ViewChange;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Supplier;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.avro.specific.SpecificRecord;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.common.serialization.Deserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Both workflows of the job through their own seam: in-memory inputs and collecting sinks in a
 * MiniCluster, with no Kafka, registry or Redis (what {@link KvRouterJob#wire} plugs in). Plain
 * Avro bytes stand in for the registry's wire format: the decoder is injected. One scripted run
 * covers the longest prefix, a busy engine, a sequence gap, a dead engine and dead letters.
 */
class WorkflowSeamITCase {

    @RegisterExtension
    static final MiniClusterExtension FLINK = ViewTestSupport.miniCluster(1);

    /** Records replayed in order, each made when the source reaches it (fresh timestamps); the MiniCluster runs in this JVM. */
    private static final List<Supplier<RawRecord>> SCRIPT = new ArrayList<>();
    /** Records per second the script is replayed at. */
    private static final int PACE = 50;
    /** What each collecting sink received, by sink name. */
    private static final Map<String, Queue<Object>> SINKS = new ConcurrentHashMap<>();
    private static final CanonicalBlockHasher HASHER = new CanonicalBlockHasher(16);

    @Test
    void theWorkflowsTurnEventsIntoTheViewOnInMemoryInputsAndOutputs() throws Exception {
        KvRouterJobConfig config = TestConfigs.with(
                "engine.suspect-after", "1 s",
                "engine.dead-after", "2 s",
                "engine.queue-cap", "8",
                "engine.update-interval", "0 ms");
        FakeEngine a = new FakeEngine("seam-a", 16);
        FakeEngine b = new FakeEngine("seam-b", 16);
        FakeEngine busy = new FakeEngine("seam-busy", 16);
        FakeEngine gap = new FakeEngine("seam-gap", 16);
        int[] prompt = tokens(1, 64);
        int[] other = tokens(2, 32);
        long[] chain = HASHER.chain(FakeEngine.MODEL, null, prompt, List.of());

        for (FakeEngine e : List.of(a, b, busy, gap)) {
            load(config, e, 0, 1);
        }
        // a holds the whole 4-block prompt, b its first two blocks.
        kv(config, a, () -> a.batch(a.stored(prompt, 0, 2)));
        kv(config, a, () -> a.batch(a.stored(prompt, 2, 4)));
        kv(config, b, () -> b.batch(b.stored(prompt, 0, 2)));
        // 20 waiting over a queue cap of 8: busy.
        kv(config, busy, () -> busy.batch(busy.stored(other, 0, 2)));
        load(config, busy, 20, 8);
        // Five batches lost: a gap.
        kv(config, gap, () -> gap.batch(gap.stored(other, 0, 2)));
        kv(config, gap, () -> {
            gap.seq += 5;
            return gap.batch();
        });
        // Two records that do not decode and one that fails validation (a block size that neither
        // divides nor is a multiple of the 16-token chunk).
        raw(config.kafka().topic(TopicNames.KV_EVENTS), "{\"not\":\"avro\"}".getBytes(StandardCharsets.UTF_8));
        raw(config.kafka().topic(TopicNames.KV_EVENTS), new byte[0]);
        kv(config, b, () -> {
            var bad = b.stored(other, 0, 2);
            bad.setBlockSize(12);
            return b.batch(bad);
        });
        // Then a falls silent while the others keep reporting, for three times engine.dead-after.
        for (int i = 0; i < 3 * PACE * 2 / 3; i++) {
            for (FakeEngine e : List.of(b, busy, gap)) {
                load(config, e, e == busy ? 20 : 0, e == busy ? 8 : 1);
            }
        }

        run(config);

        List<ViewWrite> view = received("view", ViewWrite.class);
        List<EngineStateChange> states = received("engine-states", EngineStateChange.class);
        List<DeadLetter> letters = received("dead-letters", DeadLetter.class);

        // The longest prefix: a held all four blocks, b the first two, until a died.
        assertThat(values(view, chain[3])).as("the fourth block").first().asString().startsWith("seam-a=").doesNotContain("seam-b");
        assertThat(values(view, chain[1])).as("the second block").anySatisfy(v -> assertThat(v).contains("seam-a=").contains("seam-b="));
        // A dead engine: silent past engine.dead-after, its entries leave (the fourth block's field is deleted).
        assertThat(states).filteredOn(s -> s.getEngine().equals(a.id)).extracting(s -> s.getHealth().toString())
                .containsSubsequence("SUSPECT", "DEAD");
        assertThat(values(view, chain[3])).as("the fourth block, at the end").last().isNull();
        assertThat(values(view, chain[0])).as("the first block, at the end").last().asString()
                .startsWith("seam-b=").doesNotContain("seam-a");
        // A busy engine: its health and its entry in the engine table say so.
        assertThat(states).filteredOn(s -> s.getEngine().equals(busy.id)).extracting(s -> s.getHealth().toString()).contains("BUSY");
        assertThat(engineEntries(view, busy.id)).extracting(EngineEntry::status).contains("BUSY");
        // A gap: the engine is unsynced (its entries count at half confidence) until it proves in sync.
        assertThat(engineEntries(view, gap.id)).extracting(EngineEntry::unsynced).contains(true);
        // Dead letters: the reason, the stage, the source; the job went on (the view above came after them).
        assertThat(letters).extracting(DeadLetter::getStage).containsExactly("decode", "decode", "validate");
        assertThat(letters).allSatisfy(l -> assertThat(l.getSourceTopic()).isEqualTo(config.kafka().topic(TopicNames.KV_EVENTS)));
        assertThat(letters.get(2).getReason()).contains("block_size 12 neither divides nor is a multiple");
    }

    private static void run(KvRouterJobConfig config) throws Exception {
        StreamExecutionEnvironment env = KvRouterJob.environment(config);
        env.setParallelism(1);
        DataGeneratorSource<RawRecord> source = new DataGeneratorSource<>(
                (GeneratorFunction<Long, RawRecord>) index -> SCRIPT.get(index.intValue()).get(), SCRIPT.size(),
                RateLimiterStrategy.perSecond(PACE), TypeInformation.of(RawRecord.class));
        DataStream<RawRecord> all = env.fromSource(source, WatermarkStrategy.noWatermarks(), "script");
        DecodeFunction.Decoder plainAvro = WorkflowSeamITCase::plainAvro;
        RatiosWorkflow.Outputs fromRequests = RatiosWorkflow.build(config, new RatiosWorkflow.Sources(
                        topic(all, config.kafka().topic(TopicNames.ROUTING_DECISIONS)), topic(all, config.kafka().topic(TopicNames.REQUEST_OUTCOMES)), plainAvro),
                new RatiosWorkflow.Sinks(new Collecting<ClassRatios>("ratios"), new Collecting<ViewWrite>("view"),
                        new Collecting<DeadLetter>("dead-letters"), new Collecting<Alert>("alerts")));
        DataStream<ViewResync> noResyncs = all.filter(r -> false).map(r -> new ViewResync())
                .returns(TypeInformation.of(ViewResync.class));
        RoutingViewWorkflow.build(config, new RoutingViewWorkflow.Sources(topic(all, config.kafka().topic(TopicNames.KV_EVENTS)),
                        topic(all, config.kafka().topic(TopicNames.ENGINE_LOAD)), fromRequests.hotPrefixes(), fromRequests.confirmations(),
                        fromRequests.engineSpeeds(), noResyncs, plainAvro),
                new RoutingViewWorkflow.Sinks(new Collecting<ViewWrite>("view"), new Collecting<ViewChange>("view-changes"),
                        new Collecting<EngineStateChange>("engine-states"), new Collecting<DeadLetter>("dead-letters"),
                        new Collecting<Alert>("alerts"), new Collecting<ReplicationRecommendation>("recommendations")));
        env.execute("workflow seam");
    }

    private static DataStream<RawRecord> topic(DataStream<RawRecord> all, String topic) {
        return all.filter(r -> r.topic.equals(topic)).name(topic);
    }

    // ---- the script ------------------------------------------------------------------------------

    private static void kv(KvRouterJobConfig config, FakeEngine e, Supplier<KvEventBatch> batch) {
        SCRIPT.add(() -> record(config.kafka().topic(TopicNames.KV_EVENTS), e.id, batch.get()));
    }

    private static void load(KvRouterJobConfig config, FakeEngine e, int waiting, int running) {
        SCRIPT.add(() -> record(config.kafka().topic(TopicNames.ENGINE_LOAD), e.id, e.load(waiting, running)));
    }

    private static void raw(String topic, byte[] value) {
        SCRIPT.add(() -> new RawRecord(topic, 0, SCRIPT.size(), System.currentTimeMillis(), null, value));
    }

    private static RawRecord record(String topic, String key, SpecificRecord value) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(bytes, null);
            new SpecificDatumWriter<SpecificRecord>(value.getSchema()).write(value, encoder);
            encoder.flush();
            return new RawRecord(topic, 0, 0, System.currentTimeMillis(), key.getBytes(StandardCharsets.UTF_8), bytes.toByteArray());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Plain Avro binary, the record type by topic; bytes left over or too few are an error, as a bad record's are. */
    private static Deserializer<Object> plainAvro() {
        return (topic, data) -> {
            Class<? extends SpecificRecord> type = topic.endsWith("kvr.kv-events") ? KvEventBatch.class
                    : topic.endsWith("kvr.engine-load") ? EngineLoad.class
                    : topic.endsWith("kvr.routing-decisions") ? RoutingDecision.class : RequestOutcome.class;
            try {
                BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(data, null);
                Object value = new SpecificDatumReader<>(type).read(null, decoder);
                if (!decoder.isEnd()) {
                    throw new IllegalArgumentException("bytes left over after a " + type.getSimpleName());
                }
                return value;
            } catch (IOException e) {
                throw new IllegalArgumentException("not a " + type.getSimpleName() + ": " + e, e);
            }
        };
    }

    private static int[] tokens(long seed, int n) {
        return new Random(seed).ints(n, 0, 50_000).toArray();
    }

    // ---- what came out ---------------------------------------------------------------------------

    private static <T> List<T> received(String sink, Class<T> type) {
        return SINKS.getOrDefault(sink, new ConcurrentLinkedQueue<>()).stream().map(type::cast).toList();
    }

    /** Every value the view wrote for a block, in order (null: the field deleted). */
    private static List<String> values(List<ViewWrite> view, long block) {
        String field = ViewLayout.hex(block);
        List<String> out = new ArrayList<>();
        view.stream().filter(w -> w.kind == ViewWrite.Kind.BLOCK && field.equals(w.field)).forEach(w -> out.add(w.value));
        return out;
    }

    private static List<EngineEntry> engineEntries(List<ViewWrite> view, String engine) {
        return view.stream().filter(w -> w.kind == ViewWrite.Kind.ENGINE && engine.equals(w.field) && w.value != null)
                .map(w -> EngineEntry.decode(w.value)).toList();
    }

    /** A sink that keeps what it receives in {@link #SINKS} under its name. */
    private static final class Collecting<T> implements Sink<T> {
        private final String name;

        Collecting(String name) {
            this.name = name;
        }

        @Override
        public SinkWriter<T> createWriter(WriterInitContext context) {
            Queue<Object> into = SINKS.computeIfAbsent(name, n -> new ConcurrentLinkedQueue<>());
            return new SinkWriter<>() {
                @Override
                public void write(T element, Context context) {
                    into.add(element);
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {}
            };
        }
    }
}
