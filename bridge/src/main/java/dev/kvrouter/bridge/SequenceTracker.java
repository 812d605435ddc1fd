package dev.kvrouter.bridge;

/**
 * The sequence numbers of one publisher (an engine, or one data-parallel rank of it). vLLM numbers
 * its batches 0, 1, 2, ... per publisher process, so a number lower than (or equal to) the last one
 * means the engine restarted, and a jump means batches were lost on the way (ZMQ drops at its
 * high-water mark, or the bridge was slow). Not thread-safe: one per publisher, on its receive thread.
 */
public final class SequenceTracker {

    /** What a received sequence number means relative to the ones before it. */
    public sealed interface Verdict {
        /** The first batch seen from this publisher: nothing to compare with. */
        record First(long seq) implements Verdict {}
        /** The next batch, as expected. */
        record Next(long seq) implements Verdict {}
        /** Batches {@code missingFrom..missingTo} (inclusive) never arrived. */
        record Gap(long missingFrom, long missingTo, long seq) implements Verdict {
            public long missing() {
                return missingTo - missingFrom + 1;
            }
        }
        /** The sequence went back to {@code seq} from {@code previous}: the publisher restarted. */
        record Restart(long previous, long seq) implements Verdict {}
    }

    private long last = -1;

    /** Judges a live batch's sequence number and moves the tracker to it. */
    public Verdict observe(long seq) {
        long previous = last;
        last = seq;
        if (previous < 0) {
            return new Verdict.First(seq);
        }
        if (seq == previous + 1) {
            return new Verdict.Next(seq);
        }
        if (seq > previous + 1) {
            return new Verdict.Gap(previous + 1, seq - 1, seq);
        }
        return new Verdict.Restart(previous, seq);
    }

    public long last() {
        return last;
    }
}
