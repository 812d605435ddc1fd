package dev.kvrouter.sim;

import dev.kvrouter.common.Durations;
import dev.kvrouter.sim.workload.SyntheticWorkload;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code kvr sim}: a synthetic workload through every chosen policy, each on its own simulated fleet. */
@Command(name = "sim", mixinStandardHelpOptions = true,
        description = {"Simulate an engine fleet under a synthetic workload and compare balancer policies on the same request stream "
                + "(each policy drives its own copy of the fleet, all on one virtual clock). Writes report.md and PNG charts.", "",
                "Workloads: system-prompt (apps with standing system prompts, Zipf popularity, unique user suffixes), chat (multi-turn "
                        + "sessions), one-shot (unique batch prompts), burst (one client, one prompt, many requests in seconds), long-context (multi-turn sessions on 8k-32k-token "
                        + "prompts, each with a document of its own), long-prefix (conversations reading one of 400 shared 10k-40k-token "
                        + "documents, Zipf popularity), mixed (the first four).",
                ""})
public final class SimCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    WorkloadOptions stream;

    @Option(names = "--duration", defaultValue = "10m", description = "Arrivals span this much virtual time, e.g. 600s, 10m (default: ${DEFAULT-VALUE}).")
    String duration;

    @Option(names = "--rate-scale", defaultValue = "1.0",
            description = "Multiplies every arrival rate of the workload (default: ${DEFAULT-VALUE}; the defaults suit 8 engines).")
    double rateScale;

    @Mixin
    FleetOptions fleet;

    @Override
    public Integer call() throws Exception {
        double seconds = Durations.seconds(duration);
        SyntheticWorkload.Settings s = SyntheticWorkload.Settings.defaults(seconds, stream.seed()).scaled(rateScale);
        SyntheticWorkload w = new SyntheticWorkload(stream.workload(), s);
        long n = w.generate().size();
        fleet.run("sim", w, n, seconds, null, FleetOptions.commandLine("sim", spec.commandLine().getParseResult().originalArgs()),
                spec.commandLine().getOut(), System.err);
        return 0;
    }
}
