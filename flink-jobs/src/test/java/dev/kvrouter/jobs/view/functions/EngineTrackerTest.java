package dev.kvrouter.jobs.view.functions;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.events.BlockRemoved;
import dev.kvrouter.events.BlockStored;
import dev.kvrouter.events.EngineHealth;
import dev.kvrouter.events.EngineLifecycle;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.EngineRole;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.jobs.config.KvRouterJobConfig;
import dev.kvrouter.jobs.io.LocationUpdate;
import dev.kvrouter.jobs.io.RequestSample;
import dev.kvrouter.jobs.view.TestConfigs;
import dev.kvrouter.jobs.view.model.EngineStatus;
import dev.kvrouter.schemas.BlockHashes;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.co.KeyedCoProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class EngineTrackerTest {

    private static final String MODEL = "m";
    private static final double LN_20 = Math.log(20); // ln(1 / 0.05)

    private KeyedTwoInputStreamOperatorTestHarness<String, KvEventBatch, EngineLoad, LocationUpdate> harness;
    private final int[] tokens = IntStream.range(100, 100 + 64).toArray();
    private long seq;

    private void open(KvRouterJobConfig config) throws Exception {
        harness = ProcessFunctionTestHarnesses.forKeyedCoProcessFunction(new EngineTracker(config.view(), config.engines()),
                b -> EngineTracker.engineKey(b.getEngineId(), b.getDataParallelRank()),
                l -> EngineTracker.engineKey(l.getEngineId(), l.getDataParallelRank()), Types.STRING);
        harness.setProcessingTime(0);
    }

    @AfterEach
    void close() throws Exception {
        harness.close();
    }

    @Test
    void storedBlocksGetCanonicalHashesTagsAndAnExpiryOfResidencyTimesLnOneOverFloor() throws Exception {
        open(TestConfigs.with());
        harness.processElement2(load(0, 0), 0);
        harness.processElement1(batch(1_000, stored(0, 3, 16)), 0);
        long[] chain = new CanonicalBlockHasher(16).chain(MODEL, null, tokens, List.of());
        List<LocationUpdate> out = harness.extractOutputValues();
        assertThat(out).extracting(u -> u.blockHash).containsExactly(chain[0], chain[1], chain[2]);
        assertThat(out).extracting(u -> u.tag).containsExactly(chain[0], chain[1], chain[1]);
        assertThat(out).allSatisfy(u -> {
            assertThat(u.stored).isTrue();
            assertThat(u.storedAtMs).as("the engine's clock, not after now").isEqualTo(0);
            assertThat(u.expireAtMs).isEqualTo((long) (600_000 * LN_20));
        });
    }

    /** A 1 024-token prompt in blocks of 256 tokens (engine hashes 5000 + block), for chunks big enough to time. */
    private final int[] longPrompt = IntStream.range(10_000, 10_000 + 1_024).toArray();

    private BlockStored chunk(int from, int to) {
        List<ByteBuffer> hashes = new ArrayList<>();
        List<Integer> ids = new ArrayList<>();
        for (int b = from; b < to; b++) {
            hashes.add(BlockHashes.ofUnsigned64(5000 + b));
            for (int t = b * 256; t < (b + 1) * 256; t++) {
                ids.add(longPrompt[t]);
            }
        }
        return BlockStored.newBuilder().setBlockHashes(hashes)
                .setParentBlockHash(from == 0 ? null : BlockHashes.ofUnsigned64(5000 + from - 1))
                .setTokenIds(ids).setBlockSize(256).build();
    }

    @Test
    void consecutiveChunksOfOnePrefillShowTheEnginesPaceAndNothingElseDoes() throws Exception {
        open(TestConfigs.with());
        harness.setProcessingTime(10_000);
        harness.processElement2(load(0, 0), 10_000);
        harness.processElement1(batch(1_000, chunk(0, 1)), 10_000); // the prompt's first chunk: nothing before it
        harness.processElement1(batch(1_100, chunk(1, 2)), 10_000); // the next, 100 ms later
        harness.processElement1(batch(1_350, chunk(2, 3)), 10_000); // and the next, 250 ms later
        harness.processElement1(batch(1_400, stored(0, 2, 16)), 10_000); // another prompt's blocks: the engine moved on
        harness.processElement1(batch(1_450, stored(2, 3, 16)), 10_000); // 16 tokens more of it: a decode step's, not a chunk
        harness.processElement1(batch(1_500, chunk(3, 4)), 10_000); // the first prompt again, but not what was stored last
        List<RequestSample> pace = harness.getSideOutput(EngineTracker.PREFILL_PACE).stream().map(r -> r.getValue()).toList();
        assertThat(pace).extracting(s -> s.engine, s -> s.prefillTokens, s -> s.prefillMs, s -> s.fromKvEvents)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("e1", 256.0, 100.0, true),
                        org.assertj.core.groups.Tuple.tuple("e1", 256.0, 250.0, true));
        assertThat(pace.get(1).atMs).isEqualTo(1_350);
    }

    @Test
    void memoryPressureShortensTheLifeOfNewEntries() throws Exception {
        open(TestConfigs.with());
        harness.processElement2(loadWithUsage(1000, 1000), 0); // 100 % KV usage: half the residency
        harness.processElement1(batch(0, stored(0, 1, 16)), 0);
        assertThat(harness.extractOutputValues().get(0).expireAtMs).isEqualTo((long) (300_000 * LN_20));
    }

    @Test
    void observedLifetimesTeachTheResidency() throws Exception {
        open(TestConfigs.with("engine.residency-learning-rate", "0.5", "engine.suspect-after", "100 s", "engine.dead-after", "200 s"));
        harness.processElement2(load(0, 0), 0);
        harness.processElement1(batch(0, stored(0, 1, 16)), 0);
        harness.setProcessingTime(60_000);
        harness.processElement2(load(0, 0), 60_000);
        harness.processElement1(batch(60_000, removed(0, 1, 16)), 60_000);
        harness.processElement1(batch(60_000, stored(0, 1, 16)), 60_000);
        LocationUpdate restored = harness.extractOutputValues().get(2);
        // residency = 0.5 x 600 s + 0.5 x 60 s = 330 s
        assertThat(restored.expireAtMs - restored.storedAtMs).isEqualTo((long) (330_000 * LN_20));
    }

    @Test
    void aChunkOfTwoEngineBlocksIsOneCanonicalBlockAndLeavesWithEitherHalf() throws Exception {
        open(TestConfigs.with("view.chunk-tokens", "32"));
        harness.processElement2(load(0, 0), 0);
        harness.processElement1(batch(0, stored(0, 2, 16)), 0);
        long[] chain = new CanonicalBlockHasher(32).chain(MODEL, null, tokens, List.of());
        assertThat(harness.extractOutputValues()).extracting(u -> u.blockHash).containsExactly(chain[0]);
        harness.processElement1(batch(0, removed(0, 1, 16)), 0);
        assertThat(harness.extractOutputValues()).hasSize(1).as("the first half completes no chunk");
        harness.processElement1(batch(0, removed(1, 2, 16)), 0);
        assertThat(harness.extractOutputValues()).hasSize(2);
        assertThat(harness.extractOutputValues().get(1).stored).isFalse();
    }

    @Test
    void anEngineBlockOfTwoChunksIsTwoCanonicalBlocksThatLeaveTogether() throws Exception {
        open(TestConfigs.with("view.chunk-tokens", "8"));
        harness.processElement2(load(0, 0), 0);
        harness.processElement1(batch(0, stored(0, 2, 16)), 0);
        long[] chain = new CanonicalBlockHasher(8).chain(MODEL, null, tokens, List.of());
        List<LocationUpdate> stored = harness.extractOutputValues();
        assertThat(stored).extracting(u -> u.blockHash).containsExactly(chain[0], chain[1], chain[2], chain[3]);
        // The second engine block's removal takes both chunks it completed, with the tags they were stored under.
        harness.processElement1(batch(0, removed(1, 2, 16)), 0);
        List<LocationUpdate> removed = harness.extractOutputValues().subList(4, 6);
        assertThat(removed).allSatisfy(u -> assertThat(u.stored).isFalse());
        assertThat(removed).extracting(u -> u.blockHash).containsExactly(chain[2], chain[3]);
        assertThat(removed).extracting(u -> u.tag).containsExactly(stored.get(2).tag, stored.get(3).tag);
        harness.processElement1(batch(0, removed(0, 1, 16)), 0);
        assertThat(harness.extractOutputValues().subList(6, 8)).extracting(u -> u.blockHash).containsExactly(chain[0], chain[1]);
    }

    @Test
    void blocksWhoseParentIsUnknownAreNotIndexed() throws Exception {
        open(TestConfigs.with());
        harness.processElement1(batch(0, stored(1, 2, 16)), 0);
        assertThat(harness.extractOutputValues()).isEmpty();
    }

    @Test
    void aSilentEngineGoesSuspectThenDeadLosingItsEntriesThenIsForgottenWithNoStateOrTimerLeft() throws Exception {
        open(TestConfigs.with("engine.suspect-after", "5 s", "engine.dead-after", "15 s", "engine.forget-after", "60 s",
                "engine.stall-limit", "30 s"));
        harness.processElement2(load(0, 1), 0);
        harness.processElement1(batch(0, stored(0, 3, 16)), 0);
        assertThat(harness.numKeyedStateEntries()).isPositive();

        // e1 falls silent while e2 keeps reporting: the fleet is heard, e1 is not.
        talk("e2", 1_000, 5_000);
        assertThat(lastStatusOf("e1").currentHealth).isEqualTo(EngineHealth.SUSPECT);
        talk("e2", 6_000, 15_000);
        assertThat(lastStatusOf("e1").currentHealth).isEqualTo(EngineHealth.DEAD);
        List<LocationUpdate> out = harness.extractOutputValues();
        assertThat(out.subList(3, out.size())).hasSize(3).allSatisfy(u -> {
            assertThat(u.stored).isFalse();
            assertThat(u.cause).isEqualTo("engine-dead");
        });
        talk("e2", 16_000, 75_000);
        harness.setProcessingTime(200_000); // e2 falls silent too: past the stall limit it is dead, then forgotten
        assertThat(harness.numKeyedStateEntries()).isZero();
        assertThat(harness.numProcessingTimeTimers()).isZero();
    }

    /**
     * When every engine goes silent at once the job's input stalled (a Kafka outage, a long Redis
     * failover), not the fleet: no engine is suspect or dead for it, entries stay, and when input
     * comes back every engine is as it was.
     */
    @Test
    void aStallOfTheJobsInputForTwiceDeadAfterLeavesEveryEngineAndEntry() throws Exception {
        open(TestConfigs.with("engine.suspect-after", "5 s", "engine.dead-after", "15 s"));
        harness.processElement2(load(0, 1), 0);
        harness.processElement1(batch(0, stored(0, 3, 16)), 0);
        harness.processElement2(loadOf("e2"), 0);
        int entries = harness.numKeyedStateEntries();

        harness.setProcessingTime(30_000);
        assertThat(statuses()).extracting(st -> st.currentHealth).doesNotContain(EngineHealth.SUSPECT, EngineHealth.DEAD);
        assertThat(harness.extractOutputValues()).allSatisfy(u -> assertThat(u.stored).isTrue());
        assertThat(harness.numKeyedStateEntries()).isEqualTo(entries);

        // Input is back: both report, and both are ready at once.
        harness.processElement2(load(0, 1), 30_000);
        harness.processElement2(loadOf("e2"), 30_000);
        assertThat(lastStatusOf("e1").currentHealth).isEqualTo(EngineHealth.READY);
        assertThat(lastStatusOf("e2").currentHealth).isEqualTo(EngineHealth.READY);
        // And from then on a silent engine is judged as ever: e1 silent while e2 talks.
        talk("e2", 31_000, 45_000);
        assertThat(lastStatusOf("e1").currentHealth).isEqualTo(EngineHealth.DEAD);
    }

    /** Bounded: silent past engine.stall-limit, a fleet that really died (engines and all) leaves the view. */
    @Test
    void everyEngineSilentPastTheStallLimitIsAFleetThatDiedAndLeavesTheView() throws Exception {
        open(TestConfigs.with("engine.suspect-after", "5 s", "engine.dead-after", "15 s", "engine.stall-limit", "60 s",
                "engine.forget-after", "60 s"));
        harness.processElement2(load(0, 1), 0);
        harness.processElement1(batch(0, stored(0, 3, 16)), 0);
        harness.processElement2(loadOf("e2"), 0);

        harness.setProcessingTime(59_000);
        assertThat(statuses()).extracting(st -> st.currentHealth).doesNotContain(EngineHealth.DEAD);
        harness.setProcessingTime(61_000);
        assertThat(lastStatusOf("e1").currentHealth).isEqualTo(EngineHealth.DEAD);
        assertThat(lastStatusOf("e2").currentHealth).isEqualTo(EngineHealth.DEAD);
        assertThat(harness.extractOutputValues()).filteredOn(u -> !u.stored).hasSize(3);
        harness.setProcessingTime(200_000);
        assertThat(harness.numKeyedStateEntries()).isZero();
        assertThat(harness.numProcessingTimeTimers()).isZero();
    }

    /**
     * A stall past the limit (or an engine silent past dead-after) takes the engine for dead and its
     * entries leave the view, but its chains (engine hash to canonical hash) are kept until it is
     * forgotten: when its next batch continues its sequence — the same process, its cache as it was —
     * the chains come back under the new epoch, and blocks stored on top of them are indexed.
     */
    @Test
    void anEngineTakenForDeadWhoseEventsThenContinueGetsItsChainsBackAndBlocksOnTopOfThemIndexed() throws Exception {
        takenForDeadByAStallPastTheLimit();
        assertThat(lastStatus().currentHealth).isEqualTo(EngineHealth.DEAD);
        assertThat(harness.extractOutputValues()).filteredOn(u -> !u.stored).hasSize(3);

        harness.processElement1(batch(61_000, stored(3, 4, 16)), 61_000); // the next sequence number, on top of block 2
        List<LocationUpdate> back = harness.extractOutputValues().subList(6, harness.extractOutputValues().size());
        long[] chain = new CanonicalBlockHasher(16).chain(MODEL, null, tokens, List.of());
        assertThat(back).extracting(u -> u.blockHash).containsExactly(chain[0], chain[1], chain[2], chain[3]);
        assertThat(back).allSatisfy(u -> {
            assertThat(u.stored).isTrue();
            assertThat(u.epoch).as("under the epoch after the death").isEqualTo(1);
        });
        assertThat(back.subList(0, 3)).as("kept as stored then").allSatisfy(u -> assertThat(u.storedAtMs).isZero());
        assertThat(lastStatus().currentHealth).isEqualTo(EngineHealth.READY);
    }

    /** Three blocks stored at 0, then nothing heard from anyone past the 60 s stall limit: the engine is taken for dead. */
    private void takenForDeadByAStallPastTheLimit() throws Exception {
        open(TestConfigs.with("engine.suspect-after", "5 s", "engine.dead-after", "15 s", "engine.stall-limit", "60 s",
                "engine.forget-after", "10 min"));
        harness.processElement2(load(0, 1), 0);
        harness.processElement1(batch(0, stored(0, 3, 16)), 0);
        harness.setProcessingTime(61_000);
    }

    @Test
    void anEngineTakenForDeadThatComesBackRestartedGetsNothingBack() throws Exception {
        takenForDeadByAStallPastTheLimit();
        int before = harness.extractOutputValues().size();
        harness.processElement1(batchWithSeq(0, 70_000, stored(0, 1, 16)), 61_000); // the sequence starts over: a new process
        List<LocationUpdate> after = harness.extractOutputValues().subList(before, harness.extractOutputValues().size());
        assertThat(after).filteredOn(u -> u.stored).as("only what the new process stored").hasSize(1);
        harness.processElement1(batchWithSeq(1, 71_000, stored(1, 2, 16)), 61_000);
        long[] chain = new CanonicalBlockHasher(16).chain(MODEL, null, tokens, List.of());
        assertThat(harness.extractOutputValues().subList(before, harness.extractOutputValues().size())).filteredOn(u -> u.stored)
                .as("blocks 0 and 1 as the new process stored them; the old block 2 never back").extracting(u -> u.blockHash)
                .containsExactly(chain[0], chain[1]);
    }

    @Test
    void byDefaultTheFreeKvTokensGoToTheEngineTableInTheEnginesOwnBlockSize() throws Exception {
        open(TestConfigs.with());
        harness.processElement2(loadWithUsage(400, 1000), 0);
        assertThat(lastStatus().kvFreeTokens).as("600 blocks of the view's 16 tokens, before any event says otherwise").isEqualTo(9_600);
        harness.processElement1(batch(0, stored(0, 1, 32)), 0); // the engine's blocks are 32 tokens
        harness.setProcessingTime(1_000); // past engine.update-interval: the next report is published
        harness.processElement2(loadWithUsage(400, 1000), 1_000);
        assertThat(lastStatus().kvFreeTokens).isEqualTo(19_200);
    }

    @Test
    void withEngineKvRoomOffNoKvRoomIsPublished() throws Exception {
        open(TestConfigs.with("engine.kv-room", "false"));
        harness.processElement2(loadWithUsage(400, 1000), 0);
        assertThat(lastStatus().kvFreeTokens).isEqualTo(-1);
    }

    @Test
    void heartbeatsKeepAnEngineReadyAndABigQueueMakesItBusyWithoutLosingEntries() throws Exception {
        open(TestConfigs.with("engine.queue-cap", "10"));
        harness.processElement2(load(0, 1), 0);
        harness.processElement1(batch(0, stored(0, 2, 16)), 0);
        for (long t = 1_000; t <= 30_000; t += 1_000) {
            harness.setProcessingTime(t);
            harness.processElement2(load(t == 30_000 ? 11 : 0, 1), t);
        }
        assertThat(statuses()).extracting(s -> s.currentHealth).doesNotContain(EngineHealth.SUSPECT, EngineHealth.DEAD);
        assertThat(lastStatus().currentHealth).isEqualTo(EngineHealth.BUSY);
        assertThat(harness.extractOutputValues()).allSatisfy(u -> assertThat(u.stored).isTrue());
    }

    @Test
    void theRoleAnEngineReportsReachesTheEngineTable() throws Exception {
        open(TestConfigs.with());
        harness.processElement2(load(0, 1), 0);
        assertThat(lastStatus().servingRole).as("no role reported: unified serving").isEqualTo(EngineRole.BOTH);
        EngineLoad decode = load(0, 1);
        decode.setRole(EngineRole.DECODE);
        harness.setProcessingTime(1_000);
        harness.processElement2(decode, 1_000);
        assertThat(lastStatus().servingRole).isEqualTo(EngineRole.DECODE);
        assertThat(EngineTable.entry(lastStatus(), 0, 0).role())
                .isEqualTo("DECODE");
    }

    @Test
    void anEngineSeenFullTeachesItsSlotsToTheEngineTable() throws Exception {
        open(TestConfigs.with("engine.update-interval", "0 ms"));
        harness.processElement2(load(0, 20), 0);
        assertThat(lastStatus().slots).as("never seen full: unknown").isZero();
        harness.setProcessingTime(1_000);
        harness.processElement2(load(3, 30), 1_000);
        assertThat(lastStatus().slots).as("30 running while 3 waited").isEqualTo(30);
        harness.setProcessingTime(2_000);
        harness.processElement2(load(1, 24), 2_000); // KV full at 24: waiting, but the engine runs 30 at most
        harness.setProcessingTime(3_000);
        harness.processElement2(load(0, 12), 3_000);
        assertThat(lastStatus().slots).isEqualTo(30);
        assertThat(EngineTable.entry(lastStatus(), 0, 0)
                .slots()).isEqualTo(30);
    }

    @Test
    void anEngineThatReportsItsSlotsIsKnownFullFromItsFirstReport() throws Exception {
        open(TestConfigs.with("engine.update-interval", "0 ms"));
        EngineLoad idle = load(0, 2);
        idle.setMaxRunning(32);
        harness.processElement2(idle, 0);
        assertThat(lastStatus().slots).as("its own figure, never having queued").isEqualTo(32);
        harness.setProcessingTime(1_000);
        harness.processElement2(load(3, 30), 1_000); // an older bridge's report: learned as before, never below...
        assertThat(lastStatus().slots).as("3 wait with 2 slots free: full at the 30 it runs").isEqualTo(30);
        harness.setProcessingTime(1_500);
        harness.processElement2(load(0, 30), 1_500);
        assertThat(lastStatus().slots).as("nothing waits: 32, not lowered by the older report").isEqualTo(32);
        EngineLoad restarted = load(0, 0);
        restarted.setMaxRunning(16);
        harness.setProcessingTime(2_000);
        harness.processElement2(restarted, 2_000);
        assertThat(lastStatus().slots).as("...but the engine's own figure wins, also downwards").isEqualTo(16);
    }

    @Test
    void anEngineWhoseRequestsWaitWithSlotsFreeIsFullAtWhatItRunsUntilTheyStopWaiting() throws Exception {
        open(TestConfigs.with("engine.update-interval", "0 ms"));
        EngineLoad kvFull = load(2, 3); // 3 long prompts fill its KV cache: 2 wait with 29 slots free
        kvFull.setMaxRunning(32);
        harness.processElement2(kvFull, 0);
        assertThat(lastStatus().slots).as("full at the 3 it runs").isEqualTo(3);
        assertThat(EngineTable.entry(lastStatus(), 0, 0).slots()).isEqualTo(3);
        EngineLoad drained = load(0, 3);
        drained.setMaxRunning(32);
        harness.setProcessingTime(1_000);
        harness.processElement2(drained, 1_000);
        assertThat(lastStatus().slots).as("nothing waits: its own figure again").isEqualTo(32);
    }

    @Test
    void theEngineTableSaysWhenTheEngineMeasuredItsLoadNeverLaterThanTheJobsClock() throws Exception {
        open(TestConfigs.with("engine.update-interval", "0 ms"));
        harness.setProcessingTime(5_000);
        EngineLoad measured = load(3, 1);
        measured.setTsMs(4_200); // sampled 800 ms before the job saw it
        harness.processElement2(measured, 5_000);
        assertThat(lastStatus().loadAtMs).isEqualTo(4_200);
        assertThat(EngineTable.entry(lastStatus(), 0, 0)
                .loadAtMs()).isEqualTo(4_200);
        harness.setProcessingTime(6_000);
        EngineLoad ahead = load(3, 1);
        ahead.setTsMs(9_000); // an engine clock running ahead
        harness.processElement2(ahead, 6_000);
        assertThat(lastStatus().loadAtMs).isEqualTo(6_000);
        harness.setProcessingTime(7_000);
        harness.processElement1(batch(0, stored(0, 2, 16)), 7_000);
        assertThat(lastStatus().tsMs).isEqualTo(7_000);
        assertThat(lastStatus().loadAtMs).as("a KV event is no new load figure").isEqualTo(6_000);
    }

    @Test
    void aSequenceResetDropsTheEntriesAndMovesTheEpoch() throws Exception {
        open(TestConfigs.with());
        harness.processElement2(load(0, 1), 0);
        harness.processElement1(batch(0, stored(0, 2, 16)), 0);
        harness.processElement1(batch(0), 0);
        // The sequence starts over on a batch the engine stamped later than the last one: a new process.
        harness.processElement1(batchWithSeq(0, 5_000), 0);
        List<LocationUpdate> out = harness.extractOutputValues();
        assertThat(out).hasSize(4);
        assertThat(out.subList(2, 4)).allSatisfy(u -> assertThat(u.cause).isEqualTo("engine-restarted"));
        assertThat(statuses()).extracting(s -> s.currentHealth).contains(EngineHealth.RESTARTED);
        assertThat(lastStatus().currentHealth).isEqualTo(EngineHealth.READY);
        assertThat(lastStatus().epoch).isEqualTo(1);
    }

    @Test
    void aBatchReadAgainOrOvertakenIsADuplicateCountedAndIgnoredNotARestart() throws Exception {
        open(TestConfigs.with());
        harness.processElement2(load(0, 1), 0);
        KvEventBatch first = batchWithSeq(0, 1_000, stored(0, 2, 16));
        harness.processElement1(first, 0);
        harness.processElement1(batchWithSeq(1, 2_000, removed(1, 2, 16)), 0);
        int before = harness.extractOutputValues().size();
        // After a restore from an at-least-once checkpoint both are read again.
        harness.processElement1(first, 0);
        harness.processElement1(batchWithSeq(1, 2_000, removed(1, 2, 16)), 0);
        assertThat(harness.extractOutputValues()).as("nothing stored, removed or dropped again").hasSize(before);
        assertThat(statuses()).extracting(s -> s.currentHealth).doesNotContain(EngineHealth.RESTARTED);
        assertThat(lastStatus().epoch).isZero();
        // Block 0 is still there: a later batch naming it as parent is indexed.
        harness.processElement1(batchWithSeq(2, 3_000, stored(1, 2, 16)), 0);
        assertThat(harness.extractOutputValues()).hasSize(before + 1);
    }

    @Test
    void afterARestoreNoEngineIsSilentForTheJobsOwnDowntime() throws Exception {
        KvRouterJobConfig config = TestConfigs.with("engine.suspect-after", "5 s", "engine.dead-after", "15 s");
        open(config);
        harness.processElement2(load(0, 1), 0);
        harness.processElement1(batch(0, stored(0, 2, 16)), 0);
        var snapshot = harness.snapshot(1, 1_000);
        harness.close();

        // The job was down for a minute, four times engine.dead-after; the liveness timer is overdue.
        harness = new KeyedTwoInputStreamOperatorTestHarness<>(new KeyedCoProcessOperator<>(new EngineTracker(config.view(), config.engines())),
                b -> EngineTracker.engineKey(b.getEngineId(), b.getDataParallelRank()),
                l -> EngineTracker.engineKey(l.getEngineId(), l.getDataParallelRank()), Types.STRING);
        harness.setup();
        harness.initializeState(snapshot);
        harness.open();
        harness.setProcessingTime(61_000);
        assertThat(statuses()).as("no status: the engine is judged from now on").isEmpty();
        harness.setProcessingTime(62_000);
        harness.processElement2(load(0, 1), 62_000);
        talk("e2", 62_000, 62_000 + 4_999);
        assertThat(lastStatusOf("e1").currentHealth).isEqualTo(EngineHealth.READY);
        // Silent since its report after the restore, while e2 talks: suspect after engine.suspect-after, as ever.
        talk("e2", 62_000 + 5_000, 62_000 + 5_000);
        assertThat(lastStatusOf("e1").currentHealth).isEqualTo(EngineHealth.SUSPECT);
    }

    @Test
    void aSequenceGapMarksTheEngineUnsyncedUntilItsOldEntriesExpire() throws Exception {
        open(TestConfigs.with("engine.default-residency", "10 s", "engine.suspect-after", "100 s", "engine.dead-after", "200 s"));
        harness.processElement2(load(0, 1), 0);
        harness.processElement1(batch(0, stored(0, 1, 16)), 0);
        seq += 3;
        harness.processElement1(batch(0), 0);
        assertThat(lastStatus().unsynced).isTrue();
        assertThat(lastStatus().reason).contains("3 batch(es) lost");
        harness.setProcessingTime((long) (10_000 * LN_20) + 1);
        assertThat(lastStatus().unsynced).isFalse();
        assertThat(lastStatus().reason).contains("in sync again");
    }

    // --- fixtures -----------------------------------------------------------------------------

    private KvEventBatch batch(long tsMs, Object... events) {
        return batchWithSeq(seq++, tsMs, events);
    }

    private KvEventBatch batchWithSeq(long sequence, long tsMs, Object... events) {
        return KvEventBatch.newBuilder().setEngineId("e1").setModel(MODEL).setSeq(sequence).setTsMs(tsMs)
                .setEvents(List.of(events)).build();
    }

    private BlockStored stored(int from, int to, int size) {
        List<ByteBuffer> hashes = new ArrayList<>();
        List<Integer> ids = new ArrayList<>();
        for (int b = from; b < to; b++) {
            hashes.add(BlockHashes.ofUnsigned64(1000 + b));
            for (int t = b * size; t < (b + 1) * size; t++) {
                ids.add(tokens[t]);
            }
        }
        return BlockStored.newBuilder().setBlockHashes(hashes)
                .setParentBlockHash(from == 0 ? null : BlockHashes.ofUnsigned64(1000 + from - 1))
                .setTokenIds(ids).setBlockSize(size).build();
    }

    private BlockRemoved removed(int from, int to, int size) {
        List<ByteBuffer> hashes = new ArrayList<>();
        for (int b = from; b < to; b++) {
            hashes.add(BlockHashes.ofUnsigned64(1000 + b));
        }
        return BlockRemoved.newBuilder().setBlockHashes(hashes).build();
    }

    private static EngineLoad load(int waiting, int running) {
        return loadWithUsage(100, 1000, waiting, running);
    }

    private static EngineLoad loadWithUsage(long used, long capacity) {
        return loadWithUsage(used, capacity, 0, 0);
    }

    private static EngineLoad loadWithUsage(long used, long capacity, int waiting, int running) {
        return EngineLoad.newBuilder().setEngineId("e1").setModel(MODEL).setTsMs(0).setWaiting(waiting).setRunning(running)
                .setKvBlocksUsed(used).setKvBlocksCapacity(capacity).setLifecycle(EngineLifecycle.READY).build();
    }

    /** Engine {@code engine}'s load reports every second from {@code fromMs} to {@code toMs}, the clock with them. */
    private void talk(String engine, long fromMs, long toMs) throws Exception {
        for (long t = fromMs; t <= toMs; t += 1_000) {
            harness.setProcessingTime(t);
            harness.processElement2(loadOf(engine), t);
        }
        harness.setProcessingTime(toMs);
    }

    private static EngineLoad loadOf(String engine) {
        return EngineLoad.newBuilder().setEngineId(engine).setModel(MODEL).setTsMs(0).setWaiting(0).setRunning(0)
                .setKvBlocksUsed(0).setKvBlocksCapacity(1000).setLifecycle(EngineLifecycle.READY).build();
    }

    private EngineStatus lastStatusOf(String engine) {
        List<EngineStatus> s = statuses().stream().filter(st -> st.engine.equals(engine)).toList();
        return s.get(s.size() - 1);
    }

    private List<EngineStatus> statuses() {
        var side = harness.getSideOutput(EngineTracker.ENGINE_STATUS);
        return side == null ? List.of() : side.stream().map(StreamRecord::getValue).toList();
    }

    private EngineStatus lastStatus() {
        List<EngineStatus> s = statuses();
        return s.get(s.size() - 1);
    }
}
