package dev.kvrouter.sim.policy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** A crafted fleet: loads, liveness and true cache contents set by hand. */
final class FakeFleet implements FleetView {

    final int[] loads;
    final boolean[] alive;
    final List<Set<Long>> caches = new ArrayList<>();
    /** The true wait before a new request's prefill could start, per engine (0 unless set). */
    double[] waitsMs;

    FakeFleet(int... loads) {
        this.loads = loads;
        this.alive = new boolean[loads.length];
        this.waitsMs = new double[loads.length];
        this.computing = new int[loads.length];
        Arrays.fill(alive, true);
        for (int i = 0; i < loads.length; i++) {
            caches.add(new HashSet<>());
        }
    }

    FakeFleet waits(int engine, double ms) {
        waitsMs[engine] = ms;
        return this;
    }

    @Override
    public double trueStartDelayMs(int engine) {
        return waitsMs[engine];
    }

    /** Slots per engine (4 unless set). */
    int slots = 4;
    /** Per engine, the blocks of any prompt it is computing now (none unless set). */
    final int[] computing;

    @Override
    public int slots(int engine) {
        return slots;
    }

    @Override
    public int trueComputingPrefix(int engine, long[] chain) {
        return Math.min(computing[engine], chain.length);
    }

    /** One millisecond per 16-token block. */
    @Override
    public double truePrefillMs(int engine, int tokens) {
        return tokens / 16.0;
    }

    @Override
    public int blockTokens() {
        return 16;
    }

    FakeFleet holds(int engine, long... blocks) {
        for (long b : blocks) {
            caches.get(engine).add(b);
        }
        return this;
    }

    @Override
    public int size() {
        return loads.length;
    }

    @Override
    public String engineId(int engine) {
        return "e" + engine;
    }

    @Override
    public int indexOf(String engineId) {
        return Integer.parseInt(engineId.substring(1));
    }

    @Override
    public boolean alive(int engine) {
        return alive[engine];
    }

    @Override
    public int load(int engine) {
        return loads[engine];
    }

    @Override
    public int trueCachedPrefix(int engine, long[] chain) {
        int n = 0;
        while (n < chain.length && caches.get(engine).contains(chain[n])) {
            n++;
        }
        return n;
    }

    static PolicyRequest request(long... chain) {
        return new PolicyRequest("r", chain, "c", "client", chain.length * 16);
    }
}
