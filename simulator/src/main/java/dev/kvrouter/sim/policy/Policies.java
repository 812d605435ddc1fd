package dev.kvrouter.sim.policy;

import dev.kvrouter.contract.ViewLayout;
import java.util.List;
import java.util.function.Supplier;

/** The in-memory policies by name, each call a fresh instance (one per fleet). */
public final class Policies {

    public static final List<String> IN_MEMORY = List.of("round-robin", "least-loaded", "consistent-hash", "sglang", "aibrix", "oracle");

    /**
     * @param hashPrefixBlocks blocks the consistent hash keys on
     * @param tableBlocks      blocks the SGLang and AIBrix routers remember
     * @param oracleUncachedPrefillWeight how the oracle weighs a request's uncached prefill against the true wait (the view's weight)
     * @param oracleClientMinInflight     a client's requests in flight from which the oracle treats it as a burst (the view's
     *                                    {@code view.client-min-inflight})
     */
    public record Settings(int hashPrefixBlocks, int tableBlocks, double oracleUncachedPrefillWeight, int oracleClientMinInflight) {
        public static Settings defaults() {
            return new Settings(1, 500_000, 3.0, ViewLayout.DEFAULT_CLIENT_MIN_INFLIGHT);
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
            case "oracle" -> () -> new OraclePolicy(s.oracleUncachedPrefillWeight(), s.oracleClientMinInflight());
            // "view": ViewPolicy.connect(KvRouterClient.Options, int, PrintStream), with this fleet published and the job running.
            default -> throw new IllegalArgumentException("unknown policy '" + name + "'; one of " + IN_MEMORY);
        };
    }
}
