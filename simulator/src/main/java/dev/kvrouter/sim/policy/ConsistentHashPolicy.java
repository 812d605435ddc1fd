package dev.kvrouter.sim.policy;

import dev.kvrouter.events.RouteReason;
import java.util.Map;
import java.util.TreeMap;

/**
 * Pure affinity: a consistent-hash ring (64 virtual nodes per engine) on the hash of the prompt's
 * first {@code prefixBlocks} blocks; a dead engine's keys move to the next engine on the ring. It
 * never looks at load, so a hot prefix pins one engine (failure mode 1). It predicts nothing
 * (predicted blocks 0): it routes by key, not by knowledge of any cache.
 */
public final class ConsistentHashPolicy implements Policy {

    private static final int VIRTUAL_NODES = 64;

    private final int prefixBlocks;
    private TreeMap<Long, Integer> ring;

    public ConsistentHashPolicy(int prefixBlocks) {
        if (prefixBlocks < 1) {
            throw new IllegalArgumentException("hash at least one block, was " + prefixBlocks);
        }
        this.prefixBlocks = prefixBlocks;
    }

    @Override
    public String name() {
        return "consistent-hash";
    }

    @Override
    public Route route(PolicyRequest request, FleetView fleet) {
        if (ring == null) {
            ring = new TreeMap<>();
            for (int e = 0; e < fleet.size(); e++) {
                for (int v = 0; v < VIRTUAL_NODES; v++) {
                    ring.put(mix(fleet.engineId(e).hashCode() * 1_000_003L + v), e);
                }
            }
        }
        long[] chain = request.chain();
        long key = chain.length == 0 ? mix(request.requestId().hashCode()) : mix(chain[Math.min(prefixBlocks, chain.length) - 1]);
        Map.Entry<Long, Integer> at = ring.ceilingEntry(key);
        for (int i = 0; i < ring.size(); i++) {
            if (at == null) {
                at = ring.firstEntry();
            }
            if (fleet.alive(at.getValue())) {
                return new Route(at.getValue(), 0, RouteReason.AFFINITY);
            }
            at = ring.higherEntry(at.getKey());
        }
        return new Route(0, 0, RouteReason.AFFINITY);
    }

    static long mix(long z) {
        z = (z ^ (z >>> 33)) * 0xFF51AFD7ED558CCDL;
        z = (z ^ (z >>> 33)) * 0xC4CEB9FE1A85EC53L;
        return z ^ (z >>> 33);
    }
}
