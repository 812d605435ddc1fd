package dev.kvrouter.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.bridge.OutboxBudget.Kind;
import org.junit.jupiter.api.Test;

/** What may wait for Kafka: bounded by records and bytes, no engine taking more than its share, heartbeats apart. */
class OutboxBudgetTest {

    private static final int MIB = 1024 * 1024;

    @Test
    void oneEnginesFloodStopsAtItsShareAndTheOthersBatchesStillGoIn() {
        OutboxBudget budget = new OutboxBudget(10_000, 100 * MIB, 10 * MIB, 100);
        int admitted = 0;
        while (budget.tryAdmit(Kind.BATCH, "loud", MIB)) {
            admitted++;
        }
        assertThat(admitted).isEqualTo(10);
        assertThat(budget.tryAdmit(Kind.BATCH, "quiet", MIB)).isTrue();
        assertThat(budget.queuedBytes()).isEqualTo(11L * MIB);
        budget.release(Kind.BATCH, "loud", MIB);
        assertThat(budget.tryAdmit(Kind.BATCH, "loud", MIB)).as("sent one: room for one").isTrue();
    }

    @Test
    void theBytesBoundHoldsWhateverTheRecordCount() {
        OutboxBudget budget = new OutboxBudget(10_000, 8 * MIB, 8 * MIB, 100);
        assertThat(budget.tryAdmit(Kind.BATCH, "a", 4 * MIB)).isTrue();
        assertThat(budget.tryAdmit(Kind.BATCH, "b", 4 * MIB)).isTrue();
        assertThat(budget.tryAdmit(Kind.BATCH, "c", 1)).as("8 MiB queued: full by bytes at 2 records").isFalse();
        assertThat(budget.tryAdmit(Kind.DEAD_LETTER, "c", 1)).as("dead letters count against the bytes too").isFalse();
    }

    @Test
    void theRecordBoundHoldsWhateverTheirSize() {
        OutboxBudget budget = new OutboxBudget(3, 100 * MIB, 100 * MIB, 100);
        assertThat(budget.tryAdmit(Kind.BATCH, "a", 10)).isTrue();
        assertThat(budget.tryAdmit(Kind.BATCH, "b", 10)).isTrue();
        assertThat(budget.tryAdmit(Kind.DEAD_LETTER, "b", 10)).isTrue();
        assertThat(budget.tryAdmit(Kind.BATCH, "c", 10)).isFalse();
        assertThat(budget.queuedRecords()).isEqualTo(3);
    }

    @Test
    void heartbeatsHaveTheirOwnRoomABatchFloodCannotTakeAndAreBoundedToo() {
        OutboxBudget budget = new OutboxBudget(2, 2 * MIB, 2 * MIB, 3);
        assertThat(budget.tryAdmit(Kind.BATCH, "a", MIB)).isTrue();
        assertThat(budget.tryAdmit(Kind.BATCH, "a", MIB)).isTrue();
        assertThat(budget.tryAdmit(Kind.BATCH, "a", 1)).isFalse();
        for (int i = 0; i < 3; i++) {
            assertThat(budget.tryAdmit(Kind.LOAD, "e" + i, 200)).as("load report %d while batches are full", i).isTrue();
        }
        assertThat(budget.tryAdmit(Kind.LOAD, "e4", 200)).as("heartbeats are bounded by their own count").isFalse();
        budget.release(Kind.LOAD, "e0", 200);
        assertThat(budget.tryAdmit(Kind.LOAD, "e4", 200)).isTrue();
    }

    @Test
    void everythingReleasedLeavesTheBudgetEmptyAndForgetsTheEngines() {
        OutboxBudget budget = new OutboxBudget(100, 10 * MIB, 4 * MIB, 10);
        budget.tryAdmit(Kind.BATCH, "a", 1000);
        budget.tryAdmit(Kind.BATCH, "b", 2000);
        budget.tryAdmit(Kind.LOAD, "a", 100);
        budget.tryAdmit(Kind.DEAD_LETTER, "t", 300);
        budget.release(Kind.BATCH, "a", 1000);
        budget.release(Kind.BATCH, "b", 2000);
        budget.release(Kind.LOAD, "a", 100);
        budget.release(Kind.DEAD_LETTER, "t", 300);
        assertThat(budget.queuedBytes()).isZero();
        assertThat(budget.queuedRecords()).isZero();
        assertThat(budget.enginesQueued()).as("no per-engine entry left behind").isZero();
    }
}
