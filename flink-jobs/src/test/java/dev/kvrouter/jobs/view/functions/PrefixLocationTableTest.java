package dev.kvrouter.jobs.view.functions;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.jobs.io.HotPrefix;
import dev.kvrouter.jobs.io.LocationUpdate;
import dev.kvrouter.jobs.view.model.BlockInput;
import dev.kvrouter.jobs.view.model.ViewResync;
import dev.kvrouter.redis.ViewWrite;
import dev.kvrouter.view.ViewChange;
import dev.kvrouter.view.ViewOp;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.heap.HeapKeyedStateBackend;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.co.CoBroadcastWithKeyedOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class PrefixLocationTableTest {

    private static final long BLOCK = 0xabcdef0123456789L;
    private static final long TAG = 42;

    private KeyedBroadcastOperatorTestHarness<Long, BlockInput, ViewResync, ViewWrite> harness;

    @BeforeEach
    void open() throws Exception {
        harness = newHarness();
        harness.open();
        harness.setProcessingTime(1_000);
    }

    private static KeyedBroadcastOperatorTestHarness<Long, BlockInput, ViewResync, ViewWrite> newHarness() throws Exception {
        return new KeyedBroadcastOperatorTestHarness<>(new CoBroadcastWithKeyedOperator<>(new PrefixLocationTable(), List.of()),
                BlockInput::block, Types.LONG, 1, 1, 0);
    }

    /** Keyed state entries of the table (the harness for broadcast operators has no count of its own). */
    private static int stateEntries(KeyedBroadcastOperatorTestHarness<Long, BlockInput, ViewResync, ViewWrite> h) {
        return ((HeapKeyedStateBackend<?>) ((AbstractStreamOperator<?>) h.getOperator()).getKeyedStateBackend())
                .numKeyValueStateEntries();
    }

    @AfterEach
    void close() throws Exception {
        harness.close();
    }

    @Test
    void holdersExpireAtTheirOwnTimeAndTheBlockLeavesNoStateOrTimerBehind() throws Exception {
        harness.processElement(BlockInput.of(LocationUpdate.store(BLOCK, TAG, "e1", 1_000, 0, 5_000, "GPU", 1_000)), 1_000);
        harness.processElement(BlockInput.of(LocationUpdate.store(BLOCK, TAG, "e2", 1_000, 3, 8_000, "GPU", 1_000)), 1_000);
        assertThat(values()).containsExactly(
                ViewLayout.holder("e1", 1_000, 0),
                ViewLayout.holder("e1", 1_000, 0) + "," + ViewLayout.holder("e2", 1_000, 3));
        assertThat(last().expireAtMs).isEqualTo(8_000);
        assertThat(last().tag).isEqualTo(TAG);
        assertThat(harness.numProcessingTimeTimers()).as("one timer per block, at its earliest expiry").isEqualTo(1);

        harness.setProcessingTime(4_999);
        assertThat(harness.extractOutputValues()).hasSize(2);
        harness.setProcessingTime(5_000);
        assertThat(last().value).isEqualTo(ViewLayout.holder("e2", 1_000, 3));

        harness.setProcessingTime(8_000);
        assertThat(last().value).as("no holder left: the field is deleted").isNull();
        assertThat(changes()).extracting(ViewChange::getOp, ViewChange::getEngineId, ViewChange::getCause).containsExactly(
                org.assertj.core.groups.Tuple.tuple(ViewOp.UPSERT, "e1", "stored"),
                org.assertj.core.groups.Tuple.tuple(ViewOp.UPSERT, "e2", "stored"),
                org.assertj.core.groups.Tuple.tuple(ViewOp.REMOVE, "e1", "decayed"),
                org.assertj.core.groups.Tuple.tuple(ViewOp.REMOVE, "e2", "decayed"));
        assertThat(stateEntries(harness)).isZero();
        assertThat(harness.numProcessingTimeTimers()).isZero();
    }

    @Test
    void aRemovalFromAnOlderEpochDoesNotTouchANewerEntry() throws Exception {
        harness.processElement(BlockInput.of(LocationUpdate.store(BLOCK, TAG, "e1", 1_000, 2, 9_000, null, 1_000)), 1_000);
        harness.processElement(BlockInput.of(LocationUpdate.remove(BLOCK, TAG, "e1", 1, 1_500, "engine-dead")), 1_500);
        assertThat(harness.extractOutputValues()).hasSize(1);
        harness.processElement(BlockInput.of(LocationUpdate.remove(BLOCK, TAG, "e1", 2, 1_600, "removed")), 1_600);
        assertThat(last().value).isNull();
        assertThat(stateEntries(harness)).isZero();
        // The expiry timer is still pending; when it fires it finds nothing and leaves nothing.
        harness.setProcessingTime(9_000);
        assertThat(harness.numProcessingTimeTimers()).isZero();
        assertThat(harness.extractOutputValues()).hasSize(2);
    }

    @Test
    void versionsOfALocationOnlyGoUp() throws Exception {
        harness.processElement(BlockInput.of(LocationUpdate.store(BLOCK, TAG, "e1", 1_000, 0, 9_000, null, 1_000)), 1_000);
        harness.processElement(BlockInput.of(LocationUpdate.store(BLOCK, TAG, "e1", 1_000, 0, 9_000, null, 1_000)), 1_000);
        harness.processElement(BlockInput.of(LocationUpdate.remove(BLOCK, TAG, "e1", 0, 1_000, "removed")), 1_000);
        assertThat(changes()).extracting(ViewChange::getVersion).containsExactly(1_000L, 1_001L, 1_002L);
    }

    @Test
    void aHotPrefixLeavesWithItsFirstBlocksHoldersAndChangesNothing() throws Exception {
        harness.processElement(BlockInput.of(LocationUpdate.store(BLOCK, TAG, "e2", 1_000, 0, 9_000, null, 1_000)), 1_000);
        harness.processElement(BlockInput.of(LocationUpdate.store(BLOCK, TAG, "e1", 1_000, 0, 9_000, null, 1_000)), 1_000);
        HotPrefix held = new HotPrefix();
        held.rootBlock = BLOCK;
        harness.processElement(BlockInput.of(held), 1_100);
        HotPrefix nowhere = new HotPrefix();
        nowhere.rootBlock = BLOCK + 1;
        harness.processElement(BlockInput.of(nowhere), 1_100);
        assertThat(harness.getSideOutput(PrefixLocationTable.HOT_PREFIXES)).extracting(r -> List.of(r.getValue().holders))
                .containsExactly(List.of("e1", "e2"), List.of());
        assertThat(harness.extractOutputValues()).as("no view write for a lookup").hasSize(2);
        assertThat(stateEntries(harness)).as("the block's holders, nothing for the prefixes").isEqualTo(1);
    }

    @Test
    void aRequestThatFoundTheBlockCachedKeepsItsHolderForAnotherLife() throws Exception {
        // Stored at 1 000 with an 8 000 ms life: gone at 9 000 unless used.
        harness.processElement(BlockInput.of(LocationUpdate.store(BLOCK, TAG, "e1", 1_000, 2, 9_000, "GPU", 1_000)), 1_000);
        harness.setProcessingTime(1_900);
        harness.processElement(BlockInput.of(LocationUpdate.confirm(BLOCK, TAG, "e1", 1_900, 2, 9_900)), 1_900);
        assertThat(harness.extractOutputValues()).as("used within an eighth of a life: no write").hasSize(1);

        harness.setProcessingTime(7_000);
        harness.processElement(BlockInput.of(LocationUpdate.confirm(BLOCK, TAG, "e1", 7_000, 2, 15_000)), 7_000);
        assertThat(harness.numProcessingTimeTimers()).as("a longer life waits for the block's timer").isEqualTo(1);
        assertThat(last().value).isEqualTo(ViewLayout.holder("e1", 7_000, 2));
        assertThat(last().expireAtMs).isEqualTo(15_000);
        assertThat(last().tag).isEqualTo(TAG);

        harness.setProcessingTime(9_000);
        assertThat(harness.extractOutputValues()).as("the first expiry passes; the used holder stays").hasSize(2);
        assertThat(stateEntries(harness)).isEqualTo(1);
        assertThat(harness.numProcessingTimeTimers()).as("the timer moved on to the holder's new expiry").isEqualTo(1);
        harness.setProcessingTime(15_000);
        assertThat(last().value).isNull();
        assertThat(changes()).extracting(ViewChange::getOp, ViewChange::getCause).containsExactly(
                org.assertj.core.groups.Tuple.tuple(ViewOp.UPSERT, "stored"),
                org.assertj.core.groups.Tuple.tuple(ViewOp.UPSERT, "confirmed"),
                org.assertj.core.groups.Tuple.tuple(ViewOp.REMOVE, "decayed"));
        assertThat(stateEntries(harness)).isZero();
        assertThat(harness.numProcessingTimeTimers()).isZero();
    }

    @Test
    void aBlockUsedAgainAndAgainKeepsOneTimerAndASoonerExpiryMovesItEarlier() throws Exception {
        harness.processElement(BlockInput.of(LocationUpdate.store(BLOCK, TAG, "e1", 1_000, 0, 9_000, null, 1_000)), 1_000);
        for (long t = 3_000; t <= 30_000; t += 2_000) { // every quarter of the 8 000 ms life
            harness.setProcessingTime(t);
            harness.processElement(BlockInput.of(LocationUpdate.confirm(BLOCK, TAG, "e1", t, 0, t + 8_000)), t);
            assertThat(harness.numProcessingTimeTimers()).as("at %d", t).isEqualTo(1);
        }
        assertThat(last().value).isEqualTo(ViewLayout.holder("e1", 29_000, 0));
        // e2's copy expires before e1's: the block's timer moves earlier and removes e2 alone.
        harness.processElement(BlockInput.of(LocationUpdate.store(BLOCK, TAG, "e2", 30_000, 0, 31_000, null, 30_000)), 30_000);
        harness.setProcessingTime(31_000);
        assertThat(last().value).isEqualTo(ViewLayout.holder("e1", 29_000, 0));
        harness.setProcessingTime(37_000);
        assertThat(last().value).isNull();
        assertThat(stateEntries(harness)).isZero();
        assertThat(harness.numProcessingTimeTimers()).isZero();
    }

    @Test
    void aConfirmationBringsBackAHolderTheViewLetLapseButNotOneOfAnOlderEpoch() throws Exception {
        harness.processElement(BlockInput.of(LocationUpdate.store(BLOCK, TAG, "e1", 1_000, 0, 3_000, null, 1_000)), 1_000);
        harness.setProcessingTime(3_000);
        assertThat(last().value).as("lapsed: the engine never stores a block it reuses again").isNull();

        harness.setProcessingTime(4_000);
        harness.processElement(BlockInput.of(LocationUpdate.confirm(BLOCK, TAG, "e1", 4_000, 0, 12_000)), 4_000);
        assertThat(last().value).isEqualTo(ViewLayout.holder("e1", 4_000, 0));

        harness.setProcessingTime(5_000);
        harness.processElement(BlockInput.of(LocationUpdate.store(BLOCK, TAG, "e1", 5_000, 1, 13_000, null, 5_000)), 5_000);
        harness.setProcessingTime(6_000);
        harness.processElement(BlockInput.of(LocationUpdate.confirm(BLOCK, TAG, "e1", 6_000, 0, 14_000)), 6_000);
        assertThat(last().value).as("a use of the cache before the restart").isEqualTo(ViewLayout.holder("e1", 5_000, 1));
        harness.processElement(BlockInput.of(LocationUpdate.confirm(BLOCK, TAG, "e2", 500, 0, 5_500)), 6_000);
        assertThat(harness.extractOutputValues()).as("a use whose life ended on the way changes nothing").hasSize(4);

        harness.setProcessingTime(14_000);
        assertThat(stateEntries(harness)).isZero();
        assertThat(harness.numProcessingTimeTimers()).isZero();
    }

    @Test
    void aResyncWritesEveryBlockAgainAsItStandsAndChangesNoStateOrTimer() throws Exception {
        harness.processElement(BlockInput.of(LocationUpdate.store(BLOCK, TAG, "e1", 1_000, 0, 5_000, null, 1_000)), 1_000);
        harness.processElement(BlockInput.of(LocationUpdate.store(BLOCK, TAG, "e2", 1_000, 3, 8_000, null, 1_000)), 1_000);
        harness.processElement(BlockInput.of(LocationUpdate.store(BLOCK + 1, TAG + 1, "e1", 1_000, 0, 6_000, null, 1_000)), 1_000);
        harness.processElement(BlockInput.of(LocationUpdate.remove(BLOCK + 1, TAG + 1, "e1", 0, 1_100, "removed")), 1_100);
        int writesBefore = harness.extractOutputValues().size();
        int changesBefore = changes().size();

        harness.processBroadcastElement(ViewResync.of("Redis restarted", 2_000), 2_000);

        List<ViewWrite> again = harness.extractOutputValues().subList(writesBefore, harness.extractOutputValues().size());
        assertThat(again).as("the one block with holders, whole; nothing for the block that has none")
                .extracting(w -> w.field, w -> w.value, w -> w.tag, w -> w.expireAtMs)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(ViewLayout.hex(BLOCK),
                        ViewLayout.holder("e1", 1_000, 0) + "," + ViewLayout.holder("e2", 1_000, 3), TAG, 8_000L));
        assertThat(changes()).as("the view did not change: no changelog record").hasSize(changesBefore);
        assertThat(stateEntries(harness)).isEqualTo(1);
        assertThat(harness.numProcessingTimeTimers()).as("the block's timer, and the removed block's, not yet fired").isEqualTo(2);
        harness.setProcessingTime(8_000);
        assertThat(stateEntries(harness)).isZero();
        assertThat(harness.numProcessingTimeTimers()).isZero();
    }

    @Test
    void aResyncWritesAGroupsBlocksTogetherSoTheSinkSendsOneWritePerGroup() throws Exception {
        // 40 blocks whose groups alternate with the block hash: the state's own order scatters them.
        for (long b = 0; b < 40; b++) {
            harness.processElement(BlockInput.of(LocationUpdate.store(BLOCK + b, TAG + b % 2, "e1", 1_000, 0, 5_000, null, 1_000)), 1_000);
        }
        int writesBefore = harness.extractOutputValues().size();

        harness.processBroadcastElement(ViewResync.of("Redis restarted", 2_000), 2_000);

        List<ViewWrite> again = harness.extractOutputValues().subList(writesBefore, harness.extractOutputValues().size());
        assertThat(again).extracting(w -> w.field).containsExactlyInAnyOrderElementsOf(
                java.util.stream.LongStream.range(0, 40).mapToObj(b -> ViewLayout.hex(BLOCK + b)).toList());
        long runs = java.util.stream.IntStream.range(0, again.size())
                .filter(i -> i == 0 || again.get(i).tag != again.get(i - 1).tag).count();
        assertThat(runs).as("each group's blocks in one run").isEqualTo(2);
    }

    @Test
    void aTableRestoredFromASnapshotWritesWhatItRestoredWhenAsked() throws Exception {
        harness.processElement(BlockInput.of(LocationUpdate.store(BLOCK, TAG, "e1", 1_000, 2, 9_000, "GPU", 1_000)), 1_000);
        OperatorSubtaskState snapshot = harness.snapshot(1, 1_500);
        harness.close();

        harness = newHarness();
        harness.initializeState(snapshot);
        harness.open();
        harness.setProcessingTime(2_000);
        assertThat(harness.extractOutputValues()).as("a restore alone writes nothing").isEmpty();
        harness.processBroadcastElement(ViewResync.of("the job started", 2_000), 2_000);
        assertThat(values()).containsExactly(ViewLayout.holder("e1", 1_000, 2));
        harness.setProcessingTime(9_000);
        assertThat(last().value).as("the restored expiry timer still fires").isNull();
        assertThat(stateEntries(harness)).isZero();
        assertThat(harness.numProcessingTimeTimers()).isZero();
    }

    private List<String> values() {
        return harness.extractOutputValues().stream().map(w -> w.value).toList();
    }

    private ViewWrite last() {
        List<ViewWrite> out = harness.extractOutputValues();
        return out.get(out.size() - 1);
    }

    private List<ViewChange> changes() {
        return harness.getSideOutput(PrefixLocationTable.VIEW_CHANGES).stream().map(StreamRecord::getValue).toList();
    }
}
