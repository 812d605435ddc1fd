package dev.kvrouter.sim.policy;

import java.util.function.IntPredicate;

/**
 * A router that remembers what it routed instead of what engines report (SGLang's and AIBrix's approximate
 * prefix tree): every prompt goes into the table under the engine chosen for it, and a later prompt's match is
 * read from there.
 */
abstract class RoutedTablePolicy implements Policy {

    private final RoutedPrefixTable table;

    RoutedTablePolicy(int tableBlocks) {
        this.table = new RoutedPrefixTable(tableBlocks);
    }

    @Override
    public final Route route(PolicyRequest request, FleetView fleet) {
        Route r = choose(request, fleet);
        table.insert(request.chain(), r.engine());
        return r;
    }

    /** Where the request goes; the table learns it afterwards. */
    abstract Route choose(PolicyRequest request, FleetView fleet);

    /** Blocks of the prompt each engine was routed, consecutively from the first. */
    final int[] match(PolicyRequest request, FleetView fleet) {
        return table.match(request.chain(), fleet.size());
    }

    /** The live engine among those {@code allowed} with the longest match, ties to the less loaded then the lower index; -1 when none. */
    static int longestMatch(int[] depth, FleetView fleet, IntPredicate allowed) {
        int best = -1;
        for (int e = 0; e < fleet.size(); e++) {
            if (fleet.alive(e) && allowed.test(e)
                    && (best < 0 || depth[e] > depth[best] || (depth[e] == depth[best] && fleet.load(e) < fleet.load(best)))) {
                best = e;
            }
        }
        return best;
    }
}
