package dev.kvrouter.jobs.io;

/**
 * A prefix the popularity sketch found hot, on its way to the prefix-location table (keyed by its
 * first block) to pick up the block's holders, then to the replica planner.
 */
public class HotPrefix implements Cloneable {
    /** Canonical hash of the prefix's first block. */
    public long rootBlock;
    /** The blocks recent requests of the prefix share, first to last (capped). */
    public long[] prefixBlocks;
    /** The balancer's label of the latest request; null when unlabeled. */
    public String prefixClass;
    /** Requests seen with this prefix (the sketch's guaranteed count). */
    public long requests;
    public String exemplarRequestId;
    public long tsMs;
    /** Engines holding the first block, filled in by the prefix-location table; null before. */
    public String[] holders;

    public HotPrefix() {}

    /** This prefix with its first block's holders (a copy: what an operator reads stays as it was). */
    public HotPrefix withHolders(String[] engines) {
        try {
            HotPrefix p = (HotPrefix) clone();
            p.holders = engines;
            return p;
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
    }
}
