package dev.kvrouter.sim.workload;

import java.util.Iterator;

/** A stream of requests in non-decreasing arrival order; each call gives a fresh, identical stream. */
public interface Workload {

    String name();

    Iterator<SimRequest> requests();
}
