package dev.kvrouter.httpfleet;

import dev.kvrouter.common.Durations;
import dev.kvrouter.sim.engine.EngineConfig;
import dev.kvrouter.sim.engine.Failure;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code kvr engines}: simulated engines behind vLLM's interfaces, on loopback, until stopped. */
@Command(name = "engines", mixinStandardHelpOptions = true,
        description = {"Run simulated inference engines, each behind the interfaces a vLLM server has: OpenAI-compatible HTTP "
                + "(/v1/completions, /v1/chat/completions, streamed or not, usage with cached tokens), KV events over ZMQ in vLLM's "
                + "msgpack with a replay socket, and /metrics with vLLM's gauge names. All on loopback, in this one process. Writes the "
                + "bridge's engines file and prints the engines for './kvr gateway'. Stops on Ctrl-C or after --duration."})
public final class EnginesCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--count", defaultValue = "4", description = "How many engines (default: ${DEFAULT-VALUE}).")
    int count;

    @Option(names = "--id-prefix", defaultValue = "engine-", description = "Engine ids are this prefix and 0, 1, ... (default: ${DEFAULT-VALUE}).")
    String idPrefix;

    @Option(names = "--model", defaultValue = EngineConfig.DEFAULT_MODEL, description = "The served model name (default: ${DEFAULT-VALUE}).")
    String model;

    @Option(names = "--capacity", defaultValue = "32768", description = "KV cache blocks of 16 tokens per engine (default: ${DEFAULT-VALUE}).")
    int capacity;

    @Option(names = "--prefill-rate", defaultValue = "10000", description = "Uncached prompt tokens prefilled per second (default: ${DEFAULT-VALUE}).")
    double prefillRate;

    @Option(names = "--decode-rate", defaultValue = "30", description = "Tokens generated per second per request (default: ${DEFAULT-VALUE}).")
    double decodeRate;

    @Option(names = "--max-running", defaultValue = "32", description = "Requests an engine runs at once (default: ${DEFAULT-VALUE}).")
    int maxRunning;

    @Option(names = "--engines-file", paramLabel = "FILE", description = "Write the bridge's engines file here (for './kvr bridge --config').")
    Path enginesFile;

    @Option(names = "--failures", split = ",", paramLabel = "FAILURE",
            description = "Scheduled failures as for 'kvr sim' (kill:E@T, restart:E@T/DOWN, slow:E@T/DURATIONxFACTOR, gap:E@T/N), "
                    + "T in seconds from the first request any engine receives. Default: none.")
    List<String> failures = new ArrayList<>();

    @Option(names = "--duration", paramLabel = "DURATION", description = "Stop after this long, e.g. 90s or 10m (default: run until Ctrl-C).")
    String duration;

    @Override
    public Integer call() throws Exception {
        List<String> problems = new ArrayList<>();
        if (count < 1 || count > 256) {
            problems.add("--count must be 1..256, got " + count);
        }
        if (capacity < 1 || prefillRate <= 0 || decodeRate <= 0 || maxRunning < 1) {
            problems.add("--capacity, --prefill-rate, --decode-rate and --max-running must be positive");
        }
        List<Failure> scheduled = new ArrayList<>();
        for (String f : failures) {
            try {
                Failure failure = Failure.parse(f);
                if (failure.engine() >= count) {
                    problems.add("--failures " + f + ": there is no engine " + failure.engine() + " of " + count);
                }
                scheduled.add(failure);
            } catch (IllegalArgumentException e) {
                problems.add("--failures: " + e.getMessage());
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", problems));
        }
        EngineConfig config = new EngineConfig(model, 16, capacity, prefillRate, decodeRate, maxRunning, 1_000, false,
                EngineConfig.DEFAULT_PREFILL_CHUNK_TOKENS);
        long until = duration == null ? Long.MAX_VALUE : System.nanoTime() + Durations.parse(duration).toNanos();
        List<HttpEngine> engines = new ArrayList<>();
        ScheduledExecutorService failing = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "engine-failures");
            t.setDaemon(true);
            return t;
        });
        AtomicBoolean started = new AtomicBoolean();
        Runnable startFailures = () -> {
            if (started.compareAndSet(false, true)) {
                for (Failure f : scheduled) {
                    failing.schedule(() -> {
                        engines.get(f.engine()).fail(f);
                        System.err.printf("kvr engines: %s on %s%n", f, engines.get(f.engine()).id());
                    }, (long) (f.atS() * 1000), TimeUnit.MILLISECONDS);
                }
            }
        };
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown));
        try {
            StringBuilder file = new StringBuilder("# Written by './kvr engines': the simulated engines, for './kvr bridge run'.\nengines:\n");
            PrintWriter out = spec.commandLine().getOut();
            for (int i = 0; i < count; i++) {
                HttpEngine e = HttpEngine.start(idPrefix + i, config);
                e.onFirstRequest(startFailures);
                engines.add(e);
                file.append(e.bridgeEntry());
                out.printf("%s  http://127.0.0.1:%d  events tcp://127.0.0.1:%d  replay tcp://127.0.0.1:%d%n", e.id(), e.httpPort(),
                        e.eventsPort(), e.replayPort());
            }
            if (enginesFile != null) {
                Files.createDirectories(enginesFile.toAbsolutePath().getParent());
                Files.writeString(enginesFile, file);
                out.println("engines file: " + enginesFile);
            }
            StringBuilder gateway = new StringBuilder("for './kvr gateway':");
            engines.forEach(e -> gateway.append(" --engine ").append(e.id()).append("=127.0.0.1:").append(e.httpPort()));
            out.println(gateway);
            out.flush();
            while (System.nanoTime() < until && !stop.await(Math.min(1_000, Math.max(1, (until - System.nanoTime()) / 1_000_000)),
                    TimeUnit.MILLISECONDS)) {
                // serving until stopped
            }
        } finally {
            failing.shutdownNow();
            engines.forEach(HttpEngine::close);
        }
        return 0;
    }
}
