package dev.kvrouter.sim.policy;

/** What a policy may see of its fleet: engine ids, liveness (health checks), load, and for the oracle only, the true caches. */
public interface FleetView {

    int size();

    String engineId(int engine);

    /** Index of an engine id, -1 when unknown (for policies that answer with ids). */
    int indexOf(String engineId);

    /** Whether the engine answers health checks; every policy skips dead engines, as any balancer would. */
    boolean alive(int engine);

    /** Requests waiting or running on the engine. */
    int load(int engine);

    /** Blocks of the chain the engine really holds as a consecutive prefix: perfect knowledge, for the oracle. */
    int trueCachedPrefix(int engine, long[] chain);

    /** How long a request placed on the engine now would wait before its prefill starts: perfect knowledge, for the oracle. */
    double trueStartDelayMs(int engine);

    /** Milliseconds the engine takes to prefill this many uncached tokens at its true current speed: for the oracle. */
    double truePrefillMs(int engine, int tokens);

    /** Requests the engine runs at once (its slots): for the oracle. */
    int slots(int engine);

    /**
     * Blocks of the chain a request placed on the engine is computing now (waiting, or prefilling
     * what the engine did not hold): a copy on its way, not cached yet. Perfect knowledge, for the oracle.
     */
    int trueComputingPrefix(int engine, long[] chain);

    /** Tokens per canonical block. */
    int blockTokens();
}
