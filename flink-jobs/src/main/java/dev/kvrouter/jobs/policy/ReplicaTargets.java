package dev.kvrouter.jobs.policy;

import dev.kvrouter.common.LoadStats;
import dev.kvrouter.events.EngineHealth;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;

/**
 * How many engines a hot prefix should be on, and where to warm the missing ones (DESIGN.md §1,
 * the hot-node defence): a hot prefix on one engine pins its traffic there; on two or three,
 * {@code kvr_pick} spreads it by load.
 *
 * <p>The target is {@code min} replicas, {@code max} while every live holder is loaded above the
 * fleet mean (the replicas it has are not enough). Live holders are ready or busy engines (a busy
 * one keeps its cache and gets affinity back when its load falls). Missing replicas go to the
 * least loaded ready, synced engines that do not hold the prefix and are not hot themselves.
 */
public final class ReplicaTargets {

    /** One engine as the plan sees it. */
    public record Engine(String id, EngineHealth health, double load, boolean unsynced) {}

    /**
     * @param target  replicas the prefix should have
     * @param live    holders that are ready or busy
     * @param warmOn  engines to warm it on, least loaded first (empty when nothing is missing or no engine qualifies)
     * @param source  the least loaded live holder, to copy the KV from; null when none
     */
    public record Plan(int target, int live, List<String> warmOn, String source) {}

    private static final EnumSet<EngineHealth> LIVE = EnumSet.of(EngineHealth.READY, EngineHealth.BUSY);

    private ReplicaTargets() {}

    public static Plan plan(Collection<String> holders, Map<String, Engine> fleet, int min, int max, double busyFactor) {
        List<Engine> liveHolders = holders.stream().map(fleet::get)
                .filter(e -> e != null && LIVE.contains(e.health()))
                .sorted(Comparator.comparingDouble(Engine::load).thenComparing(Engine::id)).toList();
        double mean = fleet.values().stream().filter(e -> e.health() != EngineHealth.DEAD).mapToDouble(Engine::load).average().orElse(0);
        boolean allAboveMean = !liveHolders.isEmpty() && liveHolders.stream().allMatch(e -> e.load() > mean);
        int target = allAboveMean ? max : min;
        String source = liveHolders.isEmpty() ? null : liveHolders.get(0).id();
        int missing = target - liveHolders.size();
        if (missing <= 0) {
            return new Plan(target, liveHolders.size(), List.of(), source);
        }
        List<String> warmOn = new ArrayList<>();
        fleet.values().stream()
                .filter(e -> e.health() == EngineHealth.READY && !e.unsynced() && !holders.contains(e.id()))
                .filter(e -> e.load() <= LoadStats.hotAbove(mean, busyFactor))
                .sorted(Comparator.comparingDouble(Engine::load).thenComparing(Engine::id))
                .limit(missing)
                .forEach(e -> warmOn.add(e.id()));
        return new Plan(target, liveHolders.size(), warmOn, source);
    }
}
