package dev.kvrouter.sim.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.events.AllBlocksCleared;
import dev.kvrouter.events.BlockRemoved;
import dev.kvrouter.events.BlockStored;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.events.OutcomeStatus;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RouteReason;
import dev.kvrouter.schemas.BlockHashes;
import dev.kvrouter.sim.VirtualClock;
import dev.kvrouter.sim.sink.InMemorySink;
import dev.kvrouter.sim.workload.Prompt;
import dev.kvrouter.sim.workload.SimRequest;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Hand-worked: blocks of 4 tokens, 6 blocks of KV, prefill 1 token/ms, decode 10 ms/token,
 * one sequence at a time.
 */
class SimEngineTest {

    private static final EngineConfig CONFIG = new EngineConfig("m", 4, 6, 1_000, 100, 1, 1_000, false);
    private static final CanonicalBlockHasher HASHER = new CanonicalBlockHasher(4);

    private final VirtualClock clock = new VirtualClock(0, 1_000_000);
    private final InMemorySink sink = new InMemorySink();
    private final List<Completion> done = new ArrayList<>();
    private final SimEngine engine = new SimEngine("e1", CONFIG, clock, sink, done::add);

    private static Placement placement(String id, Prompt prompt, int output) {
        SimRequest r = new SimRequest(0, 0, "c", "client", prompt, output);
        return new Placement(id, r, HASHER.chain("m", null, prompt.tokens(), null), "e1", 0, RouteReason.COLD);
    }

    private void arrive(double atMs, Placement p) {
        clock.at(atMs, () -> engine.submit(p));
    }

    private static List<Long> hashes(List<ByteBuffer> buffers) {
        return buffers.stream().map(BlockHashes::toUnsigned64).toList();
    }

    @Test
    void aChunkedPrefillCachesAndAnnouncesEachChunksBlocksAsTheChunkCompletes() throws Exception {
        // Chunks of 8 tokens (2 blocks); KV room for 16 blocks. A 22-token prompt: 5 full blocks and a partial one.
        SimEngine chunked = new SimEngine("e1", CONFIG.withCapacity(16).withPrefillChunkTokens(8), clock, sink, done::add);
        Placement first = placement("r1", Prompt.of(new Prompt.Segment(1, 22)), 1);
        clock.at(0, () -> chunked.submit(first));
        clock.runUntil(1_000);
        // Prefill 1 token/ms: chunks end at 8, 16 and the prompt at 22 ms; a batch a chunk, parents chained.
        assertThat(sink.kvEvents).extracting(KvEventBatch::getTsMs).containsExactly(1_000_008L, 1_000_016L, 1_000_022L);
        long[] chain = first.chain();
        List<List<Long>> stored = sink.kvEvents.stream().map(b -> hashes(((BlockStored) b.getEvents().get(0)).getBlockHashes())).toList();
        assertThat(stored).containsExactly(List.of(chunked.engineHash(chain[0]), chunked.engineHash(chain[1])),
                List.of(chunked.engineHash(chain[2]), chunked.engineHash(chain[3])), List.of(chunked.engineHash(chain[4])));
        assertThat(((BlockStored) sink.kvEvents.get(1).getEvents().get(0)).getParentBlockHash())
                .isEqualTo(BlockHashes.ofUnsigned64(chunked.engineHash(chain[1])));
        assertThat(done).extracting(Completion::ttftMs).containsExactly(22.0);
    }

    @Test
    void aChunkedPrefillsBlocksAreHitsForOthersFromTheChunkThatComputedThem() throws Exception {
        EngineConfig roomy = new EngineConfig("m", 4, 32, 1_000, 100, 2, 1_000, false, 8);
        SimEngine chunked = new SimEngine("e1", roomy, clock, sink, done::add);
        Prompt.Segment shared = new Prompt.Segment(1, 24);
        clock.at(0, () -> chunked.submit(placement("r1", Prompt.of(shared), 1)));
        // r2 shares r1's 24 tokens and is admitted at 10 ms, after r1's first chunk (blocks 0-1) is cached.
        clock.at(10, () -> chunked.submit(placement("r2", Prompt.of(shared, new Prompt.Segment(2, 4)), 1)));
        clock.runUntil(1_000);
        assertThat(done).filteredOn(c -> c.placement().requestId().equals("r2")).extracting(Completion::cachedBlocks).containsExactly(2);
    }

    @Test
    void queuesFifoAndSkipsTheCachedPrefill() throws Exception {
        Prompt.Segment shared = new Prompt.Segment(1, 8);
        Placement r1 = placement("r1", Prompt.of(shared), 2);
        Placement r2 = placement("r2", Prompt.of(shared, new Prompt.Segment(2, 4)), 1);
        arrive(0, r1);
        arrive(5, r2);
        clock.runUntil(1_000);

        // r1: prefill 8 tokens = 8 ms, decode 2 tokens = 20 ms, done at 28.
        // r2: arrives at 5, waits for the one slot until 28, 2 of 3 blocks cached, prefill 4 ms, TTFT 32 − 5.
        assertThat(done).extracting(c -> c.placement().requestId(), Completion::cachedBlocks, Completion::queueMs, Completion::ttftMs,
                        Completion::finishedAtMs)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("r1", 0, 0.0, 8.0, 28.0),
                        org.assertj.core.groups.Tuple.tuple("r2", 2, 23.0, 27.0, 42.0));
        assertThat(sink.outcomes).extracting(RequestOutcome::getRequestId, RequestOutcome::getCachedTokens, RequestOutcome::getTtftMs,
                        RequestOutcome::getStatus, RequestOutcome::getTsMs)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("r1", 0, 8.0, OutcomeStatus.OK, 1_000_028L),
                        org.assertj.core.groups.Tuple.tuple("r2", 8, 27.0, OutcomeStatus.OK, 1_000_042L));

        // The KV events: r1's two blocks from the root, then r2's third block under r1's second.
        assertThat(sink.kvEvents).extracting(KvEventBatch::getSeq, KvEventBatch::getTsMs).containsExactly(
                org.assertj.core.groups.Tuple.tuple(0L, 1_000_008L), org.assertj.core.groups.Tuple.tuple(1L, 1_000_032L));
        BlockStored first = (BlockStored) sink.kvEvents.get(0).getEvents().get(0);
        BlockStored second = (BlockStored) sink.kvEvents.get(1).getEvents().get(0);
        long[] chain = r2.chain();
        assertThat(hashes(first.getBlockHashes())).containsExactly(engine.engineHash(chain[0]), engine.engineHash(chain[1]));
        assertThat(first.getParentBlockHash()).isNull();
        assertThat(first.getTokenIds()).hasSize(8).containsExactlyElementsOf(box(r2.request().prompt().tokens(), 0, 8));
        assertThat(first.getBlockSize()).isEqualTo(4);
        assertThat(hashes(second.getBlockHashes())).containsExactly(engine.engineHash(chain[2]));
        assertThat(BlockHashes.toUnsigned64(second.getParentBlockHash())).isEqualTo(engine.engineHash(chain[1]));
        assertThat(second.getTokenIds()).containsExactlyElementsOf(box(r2.request().prompt().tokens(), 8, 12));
        // Engine hashes are the engine's own, not the canonical ones.
        assertThat(engine.engineHash(chain[0])).isNotEqualTo(chain[0]);
    }

    @Test
    void aPromptBeingComputedIsACopyOnItsWayUntilItsPrefillEnds() throws Exception {
        Prompt.Segment shared = new Prompt.Segment(1, 8);
        Placement r1 = placement("r1", Prompt.of(shared), 2);
        Placement r2 = placement("r2", Prompt.of(shared, new Prompt.Segment(2, 4)), 1);
        arrive(0, r1);
        arrive(5, r2);
        // r1 prefills its 2 blocks from 0 to 8 ms; r2 waits for the one slot.
        clock.runUntil(4);
        assertThat(engine.computingPrefix(r2.chain())).as("r1's 2 blocks, shared with r2").isEqualTo(2);
        clock.runUntil(10);
        assertThat(engine.computingPrefix(r1.chain())).as("r1's blocks are held now").isZero();
        assertThat(engine.computingPrefix(r2.chain())).as("r2, waiting, will compute its third block").isEqualTo(3);
        // r2 runs from 28 (r1's end) and prefills its third block until 32.
        clock.runUntil(35);
        assertThat(engine.computingPrefix(r2.chain())).isZero();
    }

    @Test
    void evictsTheTailOfTheLeastRecentlyFreedPromptAndSaysSo() throws Exception {
        Prompt.Segment shared = new Prompt.Segment(1, 8);
        Placement r1 = placement("r1", Prompt.of(shared), 2);
        Placement r2 = placement("r2", Prompt.of(shared, new Prompt.Segment(2, 4)), 1);
        Placement r3 = placement("r3", Prompt.of(new Prompt.Segment(3, 16)), 1);
        arrive(0, r1);
        arrive(5, r2);
        arrive(50, r3);
        clock.runUntil(1_000);

        // At 50 the cache holds r2's 3 blocks, all free; r3 needs 4 of 6: one eviction, r2's tail.
        assertThat(sink.kvEvents).extracting(KvEventBatch::getSeq).containsExactly(0L, 1L, 2L, 3L);
        BlockRemoved removed = (BlockRemoved) sink.kvEvents.get(2).getEvents().get(0);
        assertThat(hashes(removed.getBlockHashes())).containsExactly(engine.engineHash(r2.chain()[2]));
        assertThat(sink.kvEvents.get(2).getTsMs()).isEqualTo(1_000_050L);
        BlockStored stored = (BlockStored) sink.kvEvents.get(3).getEvents().get(0);
        assertThat(hashes(stored.getBlockHashes())).hasSize(4);
        assertThat(engine.cache().prefixMatch(r1.chain())).isEqualTo(2);
        assertThat(engine.cache().prefixMatch(r2.chain())).isEqualTo(2);
    }

    @Test
    void lostBatchesLeaveASequenceGap() throws Exception {
        engine.dropBatches(1);
        arrive(0, placement("r1", Prompt.of(new Prompt.Segment(1, 4)), 1));
        arrive(100, placement("r2", Prompt.of(new Prompt.Segment(2, 4)), 1));
        arrive(200, placement("r3", Prompt.of(new Prompt.Segment(3, 4)), 1));
        clock.runUntil(1_000);

        assertThat(sink.kvEvents).extracting(KvEventBatch::getSeq).containsExactly(1L, 2L);
        assertThat(engine.batchesDropped()).isEqualTo(1);
        assertThat(sink.outcomes).hasSize(3); // outcomes are not KV events: none lost
    }

    @Test
    void aRestartFailsItsRequestsClearsTheCacheAndStartsTheSequenceAgain() throws Exception {
        Placement r1 = placement("r1", Prompt.of(new Prompt.Segment(1, 8)), 10);
        arrive(0, r1);
        arrive(1, placement("r2", Prompt.of(new Prompt.Segment(2, 4)), 1));
        clock.at(50, () -> engine.restart(10));
        arrive(100, r1);
        clock.runUntil(1_000);

        // r1 was decoding, r2 waiting: both fail at 50. Back at 60 with AllBlocksCleared at seq 0.
        assertThat(sink.outcomes).extracting(RequestOutcome::getRequestId, RequestOutcome::getStatus, RequestOutcome::getTsMs)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("r1", OutcomeStatus.ERROR, 1_000_050L),
                        org.assertj.core.groups.Tuple.tuple("r2", OutcomeStatus.ERROR, 1_000_050L),
                        org.assertj.core.groups.Tuple.tuple("r1", OutcomeStatus.OK, 1_000_208L));
        assertThat(sink.kvEvents).extracting(KvEventBatch::getSeq, KvEventBatch::getTsMs).containsExactly(
                org.assertj.core.groups.Tuple.tuple(0L, 1_000_008L),
                org.assertj.core.groups.Tuple.tuple(0L, 1_000_060L),
                org.assertj.core.groups.Tuple.tuple(1L, 1_000_108L));
        assertThat(sink.kvEvents.get(1).getEvents()).singleElement().isInstanceOf(AllBlocksCleared.class);
        // The same prompt, recomputed from scratch, under new engine hashes (a restarted engine reseeds).
        BlockStored before = (BlockStored) sink.kvEvents.get(0).getEvents().get(0);
        BlockStored after = (BlockStored) sink.kvEvents.get(2).getEvents().get(0);
        assertThat(after.getTokenIds()).isEqualTo(before.getTokenIds());
        assertThat(after.getBlockHashes()).doesNotContainAnyElementsOf(before.getBlockHashes());
        assertThat(done.get(2).cachedBlocks()).isZero();
    }

    @Test
    void aDeadEngineFailsEverythingAndFallsSilent() throws Exception {
        engine.startHeartbeats(() -> clock.nowMs() < 3_500);
        arrive(0, placement("r1", Prompt.of(new Prompt.Segment(1, 8)), 1_000)); // decodes for 10 s
        arrive(1, placement("r2", Prompt.of(new Prompt.Segment(2, 8)), 1));
        clock.at(1_500, engine::kill);
        arrive(2_000, placement("r3", Prompt.of(new Prompt.Segment(3, 8)), 1));
        clock.runUntil(20_000);

        assertThat(sink.outcomes).extracting(RequestOutcome::getRequestId, RequestOutcome::getStatus).containsExactly(
                org.assertj.core.groups.Tuple.tuple("r1", OutcomeStatus.ERROR), org.assertj.core.groups.Tuple.tuple("r2", OutcomeStatus.ERROR),
                org.assertj.core.groups.Tuple.tuple("r3", OutcomeStatus.ERROR));
        // Heartbeats at 0 and 1000 only; one stored batch before the death.
        assertThat(sink.loads).extracting(l -> l.getTsMs()).containsExactly(1_000_000L, 1_001_000L);
        assertThat(sink.loads.get(1).getRunning()).isEqualTo(1);
        assertThat(sink.loads.get(1).getWaiting()).isEqualTo(1);
        assertThat(sink.loads.get(1).getKvBlocksUsed()).isEqualTo(2);
        assertThat(sink.kvEvents).hasSize(1);
    }

    @Test
    void aSlowEngineTakesLongerToPrefill() throws Exception {
        engine.slowDown(0.5, 100);
        arrive(0, placement("r1", Prompt.of(new Prompt.Segment(1, 8)), 1));
        arrive(200, placement("r2", Prompt.of(new Prompt.Segment(2, 8)), 1));
        clock.runUntil(1_000);
        assertThat(done).extracting(Completion::ttftMs).containsExactly(16.0, 8.0);
    }

    @Test
    void aPromptLargerThanTheWholeCacheIsRejected() throws Exception {
        arrive(0, placement("big", Prompt.of(new Prompt.Segment(1, 28)), 1));
        clock.runUntil(1_000);
        assertThat(done).singleElement().extracting(Completion::status).isEqualTo(OutcomeStatus.REJECTED);
    }

    private static List<Integer> box(int[] tokens, int from, int to) {
        List<Integer> out = new ArrayList<>();
        for (int i = from; i < to; i++) {
            out.add(tokens[i]);
        }
        return out;
    }
}
