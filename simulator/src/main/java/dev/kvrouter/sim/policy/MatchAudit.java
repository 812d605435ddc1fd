package dev.kvrouter.sim.policy;

import dev.kvrouter.balancer.KvRouterClient;
import dev.kvrouter.balancer.PickPolicy;
import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.contract.ViewConnection;
import dev.kvrouter.contract.ViewLayout;
import io.lettuce.core.KeyValue;
import io.lettuce.core.api.sync.RedisHashCommands;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How often the live view breaks the prefix property on a run's own prompts: each audited prompt's
 * blocks are read in full and every holder's run found as {@code kvr_pick} finds it
 * ({@link PickPolicy#match}: probes and bisection) and by reading every block
 * ({@link PickPolicy#consecutiveRuns}). Where they differ, the view had a hole the search passed over.
 * A measurement of the simulator ({@code --audit-match}): it reads Redis beside the picks, so a run
 * that audits is not a run to time the routing by.
 */
final class MatchAudit implements AutoCloseable {

    private final ViewConnection connection;
    private final ViewLayout layout;
    private final int tagDepth;
    private final PrintStream report;
    private long prompts;
    private long holders;
    private long holdersLonger;
    private long promptsLonger;
    private long bestChanged;
    private long blocksOver;

    MatchAudit(KvRouterClient.Options options, PrintStream report) {
        this.connection = ViewConnection.open(options.redisUrl(), options.security(), options.timeout().multipliedBy(10),
                options.connectTimeout(), 64);
        this.layout = new ViewLayout(options.keyPrefix());
        this.tagDepth = options.tagDepth();
        this.report = report;
    }

    /** Reads the prompt's blocks and the engine table now and compares the two matches. */
    synchronized void check(long[] chain) {
        int n = chain.length;
        if (n == 0) {
            return;
        }
        RedisHashCommands<String, String> redis = connection.sync();
        String floorValue = redis.hget(layout.metaKey(), "confidence_floor");
        if (floorValue == null) {
            return; // no view: nothing to compare
        }
        Map<String, EngineEntry> engines = new HashMap<>();
        redis.hgetall(layout.enginesKey()).forEach((id, v) -> engines.put(id, EngineEntry.decode(v)));
        List<String> blocks = new ArrayList<>(n);
        blocks.add(redis.hget(layout.groupKey(ViewLayout.tag(chain, 1, tagDepth)), ViewLayout.hex(chain[0])));
        if (n > 1) {
            String[] fields = new String[n - 1];
            for (int i = 1; i < n; i++) {
                fields[i - 1] = ViewLayout.hex(chain[i]);
            }
            for (KeyValue<String, String> kv : redis.hmget(layout.groupKey(ViewLayout.tag(chain, 2, tagDepth)), fields)) {
                blocks.add(kv.getValueOrElse(null));
            }
        }
        long now = System.currentTimeMillis();
        double floor = Double.parseDouble(floorValue);
        Map<String, PickPolicy.Run> searched = PickPolicy.match(engines, blocks, now, floor);
        Map<String, PickPolicy.Run> read = PickPolicy.consecutiveRuns(engines, blocks, now, floor);
        prompts++;
        holders += searched.size();
        int longer = 0;
        int bestSearched = 0;
        int bestRead = 0;
        for (var run : searched.entrySet()) {
            int consecutive = read.containsKey(run.getKey()) ? read.get(run.getKey()).depth() : 0;
            if (run.getValue().depth() != consecutive) {
                longer++;
                blocksOver += run.getValue().depth() - consecutive;
            }
            bestSearched = Math.max(bestSearched, run.getValue().depth());
            bestRead = Math.max(bestRead, consecutive);
        }
        holdersLonger += longer;
        promptsLonger += longer > 0 ? 1 : 0;
        bestChanged += bestSearched != bestRead ? 1 : 0;
    }

    @Override
    public synchronized void close() {
        report.printf(Locale.ROOT, "match audit: %d prompts, %d holder runs; the search found %d runs longer than the consecutive "
                        + "read (%.3f %% of runs; %d prompts, %.3f %%; the best run differed on %d prompts, %.3f %%), %d blocks over in all%n",
                prompts, holders, holdersLonger, percent(holdersLonger, holders), promptsLonger, percent(promptsLonger, prompts),
                bestChanged, percent(bestChanged, prompts), blocksOver);
        connection.close();
    }

    private static double percent(long part, long whole) {
        return whole == 0 ? 0 : 100.0 * part / whole;
    }
}
