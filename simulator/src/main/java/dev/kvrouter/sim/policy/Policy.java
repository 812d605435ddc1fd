package dev.kvrouter.sim.policy;

/**
 * A balancer policy. One instance drives one fleet, so it may keep state (its own prefix table,
 * a round-robin cursor). A Redis-backed implementation (the view: {@code KvRouterClient.pick(chain,
 * class, client)}) fits the same shape: map the returned engine id with {@link FleetView#indexOf}.
 */
public interface Policy extends AutoCloseable {

    String name();

    Route route(PolicyRequest request, FleetView fleet);

    /** The request finished on its engine (policies that track their own in-flight counts). */
    default void finished(PolicyRequest request, int engine) {}

    /**
     * Which of the policy's balancers a request is dealt to (0 for a policy of one): a balancer
     * learns that a slot freed when one of its own requests ends, and asks again for the requests it
     * holds ({@link Route#hold()}) then.
     */
    default int balancerOf(String requestId) {
        return 0;
    }

    /** The balancers still hold these requests (oldest first): they keep their places while waiting. */
    default void holding(java.util.List<String> requestIds) {}

    @Override
    default void close() {}
}
