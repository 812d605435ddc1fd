package dev.kvrouter.sim;

import dev.kvrouter.sim.report.ReportWriter;
import dev.kvrouter.sim.workload.TraceWorkload;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code kvr replay --trace FILE}: a Mooncake-format trace through every chosen policy, beside the trace's unbounded bound. */
@Command(name = "replay", mixinStandardHelpOptions = true,
        description = {"Replay a Mooncake-format request trace (timestamp, input_length, output_length, hash_ids of 512-token blocks) "
                + "through every chosen policy, each on its own simulated fleet, and report the hit rates beside the trace's "
                + "unbounded-cache bound (no router can beat it). Tokens are synthesised from (hash id, position).", ""})
public final class ReplayCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--trace", required = true, description = "The trace file, e.g. simulator/src/test/resources/traces/mooncake-conversation.jsonl.gz (gzipped or not).")
    Path trace;

    @Option(names = "--compression", defaultValue = "1.0",
            description = "Divide the trace's arrival times by this: 2 replays an hour in 30 virtual minutes at twice the rate (default: ${DEFAULT-VALUE}).")
    double compression;

    @Mixin
    FleetOptions fleet;

    @Override
    public Integer call() throws Exception {
        TraceWorkload w = new TraceWorkload(trace, compression);
        List<TraceWorkload.Entry> entries = w.entries();
        ReportWriter.Bound bound = new ReportWriter.Bound(TraceWorkload.unboundedPrefixHitRate(entries),
                TraceWorkload.unboundedEngineBlockHitRate(entries, fleet.engineConfig(w).blockTokens()));
        double seconds = entries.isEmpty() ? 0 : entries.get(entries.size() - 1).timestampMs() / 1000.0 / compression;
        fleet.run("replay", w, w.size(), seconds, bound, FleetOptions.commandLine("replay", spec.commandLine().getParseResult().originalArgs()),
                spec.commandLine().getOut(), System.err);
        return 0;
    }
}
