package dev.kvrouter.sim.sink;

import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.KvEventBatch;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RoutingDecision;
import java.util.Map;
import java.util.TreeMap;

/**
 * Counts what passes to another sink: records per kind, and per engine the KV batches and the
 * last sequence number sent, so what a consumer reads back can be checked against it.
 */
public final class CountingSink implements EventSink {

    private final EventSink delegate;
    private final Map<String, Integer> batchesPerEngine = new TreeMap<>();
    private final Map<String, Long> lastSeqPerEngine = new TreeMap<>();
    private int loads;
    private int outcomes;
    private int decisions;

    public CountingSink(EventSink delegate) {
        this.delegate = delegate;
    }

    @Override
    public synchronized void kvEvents(KvEventBatch batch) {
        batchesPerEngine.merge(batch.getEngineId(), 1, Integer::sum);
        lastSeqPerEngine.put(batch.getEngineId(), batch.getSeq());
        delegate.kvEvents(batch);
    }

    @Override
    public synchronized void load(EngineLoad load) {
        loads++;
        delegate.load(load);
    }

    @Override
    public synchronized void outcome(RequestOutcome outcome) {
        outcomes++;
        delegate.outcome(outcome);
    }

    @Override
    public synchronized void decision(RoutingDecision decision) {
        decisions++;
        delegate.decision(decision);
    }

    public synchronized Map<String, Integer> batchesPerEngine() {
        return Map.copyOf(batchesPerEngine);
    }

    public synchronized Map<String, Long> lastSeqPerEngine() {
        return Map.copyOf(lastSeqPerEngine);
    }

    public synchronized int loads() {
        return loads;
    }

    public synchronized int outcomes() {
        return outcomes;
    }

    public synchronized int decisions() {
        return decisions;
    }

    @Override
    public void flush() {
        delegate.flush();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
