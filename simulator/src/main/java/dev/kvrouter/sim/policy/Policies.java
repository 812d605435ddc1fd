package dev.kvrouter.sim.policy;

import java.util.List;
import java.util.function.Supplier;

/** The in-memory policies by name, each call a fresh instance (one per fleet). */
public final class Policies {

    public static final List<String> IN_MEMORY = List.of("round-robin", "least-loaded", "consistent-hash", "sglang", "aibrix", "oracle");

    /**
     * @param hashPrefixBlocks blocks the consistent hash keys on
     * @param tableBlocks      blocks the SGLang and AIBrix routers remember
     * @param hotFactor        the oracle's load cap, × fleet mean (the view's k)
     */
    public record Settings(int hashPrefixBlocks, int tableBlocks, double hotFactor) {
        public static Settings defaults() {
            return new Settings(1, 500_000, 2.0);
        }
    }

    private Policies() {}

    public static Supplier<Policy> factory(String name, Settings s) {
        return switch (name) {
            case "round-robin" -> RoundRobinPolicy::new;
            case "least-loaded" -> LeastLoadedPolicy::new;
            case "consistent-hash" -> () -> new ConsistentHashPolicy(s.hashPrefixBlocks());
            case "sglang" -> () -> SglangCacheAwarePolicy.defaults(s.tableBlocks());
            case "aibrix" -> () -> new AibrixPrefixCachePolicy(8, 2.0, s.tableBlocks());
            case "oracle" -> () -> new OraclePolicy(s.hotFactor());
            // "view": ViewPolicy.connect(KvRouterClient.Options), with this fleet published and the job running.
            default -> throw new IllegalArgumentException("unknown policy '" + name + "'; one of " + IN_MEMORY);
        };
    }
}
