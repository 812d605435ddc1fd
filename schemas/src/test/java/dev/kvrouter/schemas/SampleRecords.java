package dev.kvrouter.schemas;

import dev.kvrouter.alerts.Alert;
import dev.kvrouter.alerts.AlertKind;
import dev.kvrouter.dlq.DeadLetter;
import dev.kvrouter.events.AllBlocksCleared;
import dev.kvrouter.events.BlockRemoved;
import dev.kvrouter.events.BlockStored;
import dev.kvrouter.events.EngineLifecycle;
import dev.kvrouter.events.EngineHealth;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.EngineStateChange;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.events.OutcomeStatus;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RouteReason;
import dev.kvrouter.events.RoutingDecision;
import dev.kvrouter.metrics.ClassRatios;
import dev.kvrouter.metrics.WindowKind;
import dev.kvrouter.view.ViewChange;
import dev.kvrouter.view.ViewOp;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.avro.specific.SpecificRecord;

/** One realistic record of every topic value type, with the edge cases that matter (hashes above 2^63, digests, nulls). */
public final class SampleRecords {

    private SampleRecords() {}

    public static KvEventBatch kvEventBatch() {
        ByteBuffer digest = ByteBuffer.wrap(new byte[32]);
        digest.put(0, (byte) 0xab);
        return KvEventBatch.newBuilder()
                .setEngineId("engine-7").setDataParallelRank(1).setModel("meta-llama/Llama-3.1-8B-Instruct")
                .setSeq(42).setTsMs(1_795_000_000_123L)
                .setEvents(List.of(
                        BlockStored.newBuilder()
                                .setBlockHashes(List.of(BlockHashes.ofUnsigned64("18446744073709551557"), digest))
                                .setParentBlockHash(BlockHashes.ofUnsigned64(12345))
                                .setTokenIds(java.util.stream.IntStream.range(0, 32).boxed().toList())
                                .setBlockSize(16).setLoraName("sql-adapter").setMedium("GPU")
                                .setExtraKeys(List.of("mm:9f2c")).setGroupIdx(0)
                                .setKvCacheSpecKind("full_attention").build(),
                        BlockRemoved.newBuilder().setBlockHashes(List.of(BlockHashes.ofUnsigned64(7))).build(),
                        AllBlocksCleared.newBuilder().build()))
                .build();
    }

    public static EngineLoad engineLoad() {
        return EngineLoad.newBuilder().setEngineId("engine-7").setModel("m").setTsMs(1_795_000_000_500L)
                .setWaiting(3).setRunning(17).setKvBlocksUsed(40_000).setKvBlocksCapacity(65_536)
                .setLifecycle(EngineLifecycle.READY).setHeartbeatIntervalMs(1000).build();
    }

    public static EngineStateChange engineStateChange() {
        return EngineStateChange.newBuilder().setEngine("engine-7/dp1").setHealth(EngineHealth.SUSPECT)
                .setPrevious(EngineHealth.READY).setReason("no heartbeat for 5000 ms").setEpoch(4).setUnsynced(true)
                .setWaiting(3).setRunning(17).setKvUsage(0.61).setResidencyMs(540_000).setTsMs(1_795_000_000_900L).build();
    }

    public static RoutingDecision routingDecision() {
        return RoutingDecision.newBuilder().setRequestId("req-1").setClientId("tenant-a").setPrefixClass(null)
                .setEngineId("engine-7").setPredictedCachedBlocks(12).setReason(RouteReason.AFFINITY)
                .setViewAgeMs(35L).setTsMs(1_795_000_000_600L).setPromptBlockHashes(List.of(-1L, 99L)).build();
    }

    public static RequestOutcome requestOutcome() {
        return RequestOutcome.newBuilder().setRequestId("req-1").setEngineId("engine-7").setPromptTokens(6758)
                .setCachedTokens(6144).setQueueMs(1.5).setTtftMs(212.25).setOutputTokens(500)
                .setStatus(OutcomeStatus.OK).setTsMs(1_795_000_003_000L).build();
    }

    public static ViewChange viewChange() {
        return ViewChange.newBuilder().setBlockHash(Long.MIN_VALUE).setEngineId("engine-7").setOp(ViewOp.UPSERT)
                .setConfidence(0.87).setMedium("GPU").setVersion(3).setTsMs(1_795_000_000_700L).setCause("stored").build();
    }

    public static ClassRatios classRatios() {
        return ClassRatios.newBuilder().setPrefixClass("hot").setWindowKind(WindowKind.TUMBLING)
                .setWindowStartMs(1_795_000_000_000L).setWindowEndMs(1_795_000_060_000L)
                .setRequests(100).setAffinityHits(40).setAffinityHitRate(0.4).setAvoidedTokensPerHit(5120)
                .setAvoidedUsdPerHit(0.000768).setLoadGini(0.12).setAffinityRouted(50).setStale(5)
                .setStalenessRatio(0.1).setTtftP50Ms(180.0).setTtftP99Ms(900.0).build();
    }

    public static Alert alert() {
        return Alert.newBuilder().setKind(AlertKind.STALE_VIEW).setSubject("app-a").setFiring(true).setValue(0.41)
                .setThreshold(0.2).setMessage("staleness 41 % over 20 %").setTsMs(1_795_000_001_000L).build();
    }

    public static DeadLetter deadLetter() {
        return DeadLetter.newBuilder().setSourceTopic("kvr.kv-events").setSourcePartition(2).setSourceOffset(1234)
                .setSourceKey(ByteBuffer.wrap("engine-7".getBytes())).setRawValue(ByteBuffer.wrap(new byte[] {1, 2, 3}))
                .setStage("decode").setReason("not in the Confluent wire format").setErrorClass("SerializationException")
                .setTsMs(1_795_000_000_800L).build();
    }

    public static List<SpecificRecord> all() {
        return List.of(kvEventBatch(), engineLoad(), engineStateChange(), routingDecision(), requestOutcome(), viewChange(), classRatios(), alert(), deadLetter());
    }

    /** A record's Avro binary body (no framing), as its own schema writes it. */
    public static byte[] avroBody(org.apache.avro.specific.SpecificRecord record) throws java.io.IOException {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        org.apache.avro.io.BinaryEncoder encoder = org.apache.avro.io.EncoderFactory.get().binaryEncoder(out, null);
        new org.apache.avro.specific.SpecificDatumWriter<org.apache.avro.specific.SpecificRecord>(record.getSchema()).write(record, encoder);
        encoder.flush();
        return out.toByteArray();
    }
}
