package dev.kvrouter.jobs.ratios;

/** A routing decision with the outcome of the same request: the unit every ratio counts. */
public class JoinedRequest {
    public String requestId;
    /** The balancer's class label; null when the pipeline is to derive one from popularity. */
    public String prefixClass;
    public String clientId;
    public String engineId;
    public String reason;
    public int predictedCachedBlocks;
    /** The prompt's first canonical block, for popularity classes; 0 when the decision had none. */
    public long rootBlock;
    public int promptTokens;
    public int cachedTokens;
    public int transferredTokens;
    public double queueMs;
    public double ttftMs;
    public long decidedAtMs;
    public long finishedAtMs;

    public JoinedRequest() {}
}
