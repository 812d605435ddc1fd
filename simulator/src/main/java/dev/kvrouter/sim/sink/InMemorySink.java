package dev.kvrouter.sim.sink;

import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RoutingDecision;
import java.util.ArrayList;
import java.util.List;

/** Keeps every record, in emission order (tests). */
public final class InMemorySink implements EventSink {

    public final List<KvEventBatch> kvEvents = new ArrayList<>();
    public final List<EngineLoad> loads = new ArrayList<>();
    public final List<RequestOutcome> outcomes = new ArrayList<>();
    public final List<RoutingDecision> decisions = new ArrayList<>();

    @Override
    public void kvEvents(KvEventBatch batch) {
        kvEvents.add(batch);
    }

    @Override
    public void load(EngineLoad load) {
        loads.add(load);
    }

    @Override
    public void outcome(RequestOutcome outcome) {
        outcomes.add(outcome);
    }

    @Override
    public void decision(RoutingDecision decision) {
        decisions.add(decision);
    }
}
