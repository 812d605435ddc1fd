package dev.kvrouter.sim;

import java.util.List;
import picocli.CommandLine.Option;

/** {@code --workload} and {@code --seed}: which synthetic request stream, as {@code sim} and {@code demo} take it. */
public final class WorkloadOptions {

    @Option(names = "--workload", defaultValue = "mixed",
            description = "mixed, system-prompt, chat, one-shot, burst, long-context or long-prefix (default: ${DEFAULT-VALUE}).")
    String workload;

    @Option(names = "--seed", defaultValue = "1", description = "Workload seed; equal seeds give equal request streams (default: ${DEFAULT-VALUE}).")
    long seed;

    public String workload() {
        return workload;
    }

    public long seed() {
        return seed;
    }

    /** The same choice as {@code sim}'s arguments. */
    public List<String> asArgs() {
        return List.of("--workload", workload, "--seed", Long.toString(seed));
    }
}
