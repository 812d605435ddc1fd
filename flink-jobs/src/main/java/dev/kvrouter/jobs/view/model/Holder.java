package dev.kvrouter.jobs.view.model;

/** One engine holding one canonical block, in the prefix-location table. */
public class Holder {
    public long storedAtMs;
    public long epoch;
    public long expireAtMs;
    public String medium;
    public long version;
    /** The block's Redis group tag (the same for every holder of a block). */
    public long tag;

    public Holder() {}
}
