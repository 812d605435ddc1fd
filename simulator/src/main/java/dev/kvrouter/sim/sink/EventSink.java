package dev.kvrouter.sim.sink;

import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RoutingDecision;

/**
 * Where a simulated fleet's records go: exactly the records real engines and balancers produce.
 * A fleet whose sink is {@link #DISCARD} builds no records at all (policy comparison runs).
 */
public interface EventSink extends AutoCloseable {

    EventSink DISCARD = new EventSink() {
        @Override
        public boolean enabled() {
            return false;
        }

        @Override
        public void kvEvents(KvEventBatch batch) {}

        @Override
        public void load(EngineLoad load) {}

        @Override
        public void outcome(RequestOutcome outcome) {}

        @Override
        public void decision(RoutingDecision decision) {}
    };

    /** False when records would be thrown away, so the fleet need not build them. */
    default boolean enabled() {
        return true;
    }

    void kvEvents(KvEventBatch batch);

    void load(EngineLoad load);

    void outcome(RequestOutcome outcome);

    void decision(RoutingDecision decision);

    default void flush() {}

    @Override
    default void close() {}
}
