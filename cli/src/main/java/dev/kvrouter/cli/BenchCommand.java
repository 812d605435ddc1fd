package dev.kvrouter.cli;

import dev.kvrouter.cli.bench.Benchmarks;
import dev.kvrouter.contract.SlotSpread;
import dev.kvrouter.stack.StackAddresses;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code kvr bench ...}: benchmarks that print figures, each beside a ceiling measured in the same run. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Benchmarks against the running stack; figures are printed, never asserted. Record them in BENCHMARKS.md.",
        subcommands = {BenchCommand.Pick.class, BenchCommand.Ingest.class, BenchCommand.Slots.class, BenchCommand.Gateway.class})
public final class BenchCommand {

    @Command(name = "pick", mixinStandardHelpOptions = true,
            description = "kvr_pick p50/p99 latency and picks/s for prompts of 8, 64, 512 and 2,048 blocks, beside a raw GET of one key.")
    static final class Pick implements Callable<Integer> {
        @Option(names = "--iterations", defaultValue = "20000", description = "Picks per case (default: ${DEFAULT-VALUE}).")
        int iterations;

        @Option(names = "--threads", split = ",", defaultValue = "4,16",
                description = "Client counts for the concurrent rates, each a client, connection and thread of its own (default: ${DEFAULT-VALUE}).")
        List<Integer> threads;

        @Option(names = "--max-seconds", defaultValue = "20", description = "Upper bound per case (default: ${DEFAULT-VALUE}).")
        int maxSeconds;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            List<String> problems = new java.util.ArrayList<>();
            if (threads.stream().anyMatch(n -> n < 1 || n > 256)) {
                problems.add("--threads " + threads + ": client counts from 1 to 256, comma-separated");
            }
            if (iterations < 1) {
                problems.add("--iterations " + iterations + ": at least 1");
            }
            if (maxSeconds < 1) {
                problems.add("--max-seconds " + maxSeconds + ": at least 1");
            }
            if (!problems.isEmpty()) {
                throw new CommandLine.ParameterException(spec.commandLine(), String.join("; ", problems));
            }
            Benchmarks.pick(StackAddresses.toMeasure(), iterations, Duration.ofSeconds(maxSeconds), threads, System.out);
            return 0;
        }
    }

    @Command(name = "gateway", mixinStandardHelpOptions = true,
            description = "What routing by the view costs nginx: one nginx routing by the view and one proxying round robin without "
                    + "Lua, one worker each, in front of engines that answer at once, the same requests interleaved round by round: "
                    + "latency p50/p99, requests/s, nginx's CPU per request (process accounting) and the CPU spent hashing prompts. "
                    + "Needs no stack (a private Redis and engines of its own); installs nginx's packages like './kvr gateway'.")
    static final class Gateway implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--blocks", split = ",", defaultValue = "64,2048", description = "Prompt sizes in blocks (default: ${DEFAULT-VALUE}).")
        List<Integer> blocks;

        @Option(names = "--requests", defaultValue = "3000", description = "Requests per round and gateway (default: ${DEFAULT-VALUE}).")
        int requests;

        @Option(names = "--concurrency", defaultValue = "8", description = "Requests in flight (default: ${DEFAULT-VALUE}).")
        int concurrency;

        @Option(names = "--rounds", defaultValue = "4", description = "Rounds, each gateway once a round (default: ${DEFAULT-VALUE}).")
        int rounds;

        @Override
        public Integer call() throws Exception {
            List<String> problems = new java.util.ArrayList<>();
            if (blocks.stream().anyMatch(b -> b < 1 || b > 65_536)) {
                problems.add("--blocks " + blocks + ": each from 1 to 65536");
            }
            if (requests < 100) {
                problems.add("--requests " + requests + ": at least 100 (a p99 needs them)");
            }
            if (concurrency < 1 || concurrency > 256) {
                problems.add("--concurrency " + concurrency + ": from 1 to 256");
            }
            if (rounds < 1) {
                problems.add("--rounds " + rounds + ": at least 1");
            }
            if (!problems.isEmpty()) {
                throw new CommandLine.ParameterException(spec.commandLine(), String.join("; ", problems));
            }
            Benchmarks.gateway(blocks, requests, concurrency, rounds, System.out);
            return 0;
        }
    }

    @Command(name = "ingest", mixinStandardHelpOptions = true,
            description = "Block-entry updates/s through Kafka -> Flink -> Redis beside raw pipelined Redis writes of the same "
                    + "entries; CPU-us per entry of the job on a fresh JVM's first job and on a warm one, thread by thread (its "
                    + "tasks, its I/O, the JIT compiler, the collector) and less the JIT compiler's threads, beside the raw "
                    + "writer's and Redis's (process and thread accounting); Redis bytes per entry; how long the view takes to "
                    + "come back after its keys are flushed; freshness (event time -> visible) at half the measured rate, and "
                    + "what its late samples waited through (collector pauses, checkpoints).")
    static final class Ingest implements Callable<Integer> {
        @Option(names = "--entries", defaultValue = "200000", description = "Block entries to ingest (default: ${DEFAULT-VALUE}).")
        int entries;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--warm-up-entries", defaultValue = "200000",
                description = "Block entries a first job drains before the measured one, in the same JVM, so that the measured "
                        + "job runs compiled code as a long-running job does; its figures are printed as the cold ones. 0 measures "
                        + "a fresh JVM's first job only (default: ${DEFAULT-VALUE}).")
        int warmUpEntries;

        @Option(names = "--engines", defaultValue = "32", description = "Simulated engines (default: ${DEFAULT-VALUE}).")
        int engines;

        @Option(names = "--freshness-seconds", defaultValue = "20", description = "Length of the freshness run (default: ${DEFAULT-VALUE}).")
        int freshnessSeconds;

        @Option(names = "-D", paramLabel = "NAME=VALUE", description = "A job option for the measured job (see 'kvr job run --help').")
        java.util.Map<String, String> jobOptions = new java.util.LinkedHashMap<>();

        @Option(names = "--freshness-rate", defaultValue = "0",
                description = "Entries/s of the freshness run; 0 (default) means half the rate just measured.")
        double freshnessRate;

        @Override
        public Integer call() throws Exception {
            List<String> problems = new java.util.ArrayList<>();
            if (entries < 16) {
                problems.add("--entries " + entries + ": give at least 16 (one batch of 16 blocks)");
            }
            if (warmUpEntries != 0 && warmUpEntries < 16) {
                problems.add("--warm-up-entries " + warmUpEntries + ": give 0 (no warm-up) or at least 16");
            }
            if (engines < 1) {
                problems.add("--engines " + engines + ": give at least 1");
            }
            if (freshnessSeconds < 1) {
                problems.add("--freshness-seconds " + freshnessSeconds + ": give at least 1");
            }
            if (!problems.isEmpty()) {
                throw new CommandLine.ParameterException(spec.commandLine(), String.join("; ", problems));
            }
            Benchmarks.ingest(StackAddresses.toMeasure(), entries, warmUpEntries, engines, Duration.ofSeconds(freshnessSeconds), freshnessRate, jobOptions, System.out);
            return 0;
        }
    }

    @Command(name = "slots", mixinStandardHelpOptions = true,
            description = "How a trace's blocks and picks spread over Redis Cluster slots, per tag depth.")
    static final class Slots implements Callable<Integer> {
        @Option(names = "--trace", required = true, description = "A trace in the Mooncake format (hash_ids per request).")
        Path trace;

        @Option(names = "--depths", split = ",", defaultValue = "1,2,3,4", description = "Tag depths to try (default: ${DEFAULT-VALUE}).")
        List<Integer> depths;

        @Override
        public Integer call() throws Exception {
            SlotSpread.report(trace, depths, Integer.MAX_VALUE, System.out);
            return 0;
        }
    }
}
