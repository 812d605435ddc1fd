package dev.kvrouter.jobs.ratios;

import dev.kvrouter.events.RouteReason;

/** A routing decision with the outcome of the same request: the unit every ratio counts. */
public class JoinedRequest implements Cloneable {
    public String requestId;
    /** The balancer's class label; null when the pipeline is to derive one from popularity. */
    public String prefixClass;
    public String clientId;
    public String engineId;
    /** The engine the balancer chose (the outcome's engine may differ if the request was moved). */
    public String decidedEngine;
    /** Why the balancer placed it where it did. */
    public RouteReason reason;
    public int predictedCachedBlocks;
    /** Blocks the view's best holder matched, whichever engine was chosen (what affinity would match); null when not said. */
    public Integer bestHolderBlocks;
    /** The decision's cost view: prefill milliseconds it expected to skip, and the wait it added; null when not said. */
    public Double savedPrefillMs;
    public Double addedWaitMs;
    /** The prompt's first canonical block, for popularity classes; 0 when the decision had none. */
    public long rootBlock;
    /** The decision's prompt blocks, for the hot-prefix table; dropped once the class is assigned. */
    public long[] promptBlocks;
    public int promptTokens;
    public int cachedTokens;
    /** The request completed (status OK): its cached tokens say what the engine held. */
    public boolean completed;
    public int transferredTokens;
    public double queueMs;
    public double ttftMs;
    public long decidedAtMs;
    public long finishedAtMs;
    /** 0 joined; 1 a decision whose outcome never came; 2 an outcome with no decision. Unmatched ones are only counted. */
    public int unmatched;

    public static final int JOINED = 0;
    public static final int DECISION_ONLY = 1;
    public static final int OUTCOME_ONLY = 2;

    public JoinedRequest() {}

    /**
     * This request with its class, without the prompt blocks (the windows do not need them). A copy:
     * the job reuses objects between chained operators, and the confirmations read the same request.
     */
    public JoinedRequest classed(String prefixClass) {
        try {
            JoinedRequest c = (JoinedRequest) clone();
            c.prefixClass = prefixClass;
            c.promptBlocks = null;
            return c;
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
    }
}
