package dev.kvrouter.jobs.view.model;

/**
 * What the pipeline knows of one engine block: the canonical blocks it completes and the chain
 * state after it, so the engine's next block (naming this one as parent) can be placed, and a
 * removal (engine hash only) can be applied.
 */
public class EngineBlock {
    /** Canonical hashes completed within this engine block (usually one; none when the chunk is bigger). */
    public long[] canonical;
    /** The Redis group tag of each canonical hash, same order. */
    public long[] tags;
    /** Canonical hash of the last full chunk at the end of this block (the root when there is none yet). */
    public long chainTip;
    /** Full chunks in the chain up to chainTip. */
    public int depth;
    /** Hash at the tag depth once the chain reached it; 0 before. */
    public long anchor;
    /** Tokens after chainTip not yet making a full chunk. */
    public int[] partial;
    public long storedAtMs;

    public EngineBlock() {}
}
