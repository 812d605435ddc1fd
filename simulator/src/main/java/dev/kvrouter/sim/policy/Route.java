package dev.kvrouter.sim.policy;

import dev.kvrouter.events.RouteReason;

/**
 * A policy's answer.
 *
 * @param engine          index of the chosen engine in the fleet
 * @param predictedBlocks blocks the policy expects the engine to hold (0 when not routed for affinity)
 */
public record Route(int engine, int predictedBlocks, RouteReason reason) {}
