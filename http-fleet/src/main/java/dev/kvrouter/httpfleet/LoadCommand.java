package dev.kvrouter.httpfleet;

import dev.kvrouter.common.Durations;
import dev.kvrouter.sim.WorkloadOptions;
import dev.kvrouter.sim.engine.EngineConfig;
import dev.kvrouter.sim.workload.SyntheticWorkload;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code kvr load}: a synthetic workload sent over HTTP to a balancer or an engine, as its clients would. */
@Command(name = "load", mixinStandardHelpOptions = true,
        description = {"Send one of the simulator's workloads to an OpenAI-compatible endpoint (nginx in front of engines, or one engine) "
                + "at its arrival times on the wall clock: prompts as token ids, streamed with usage, the client id and prefix class in "
                + "headers. Prints, per prefix class, the time to first token the clients saw (p50, p99), the share of prompt tokens "
                + "the engines reported cached, and the load Gini over the upstreams the balancer named; writes results.csv and "
                + "summary.csv with --out."})
public final class LoadCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--target", required = true, paramLabel = "URL",
            description = "An endpoint's base URL, e.g. http://127.0.0.1:8080; repeat for balancers side by side (request n goes to target n mod count).")
    List<URI> targets;

    @Mixin
    WorkloadOptions stream;

    @Option(names = "--duration", defaultValue = "150s", description = "Arrivals span this long, e.g. 150s (default: ${DEFAULT-VALUE}).")
    String duration;

    @Option(names = "--rate-scale", defaultValue = "1.0",
            description = "Multiplies every arrival rate of the workload (default: ${DEFAULT-VALUE}; the defaults suit 8 engines).")
    double rateScale;

    @Option(names = "--model", defaultValue = EngineConfig.DEFAULT_MODEL, description = "The model requests name (default: ${DEFAULT-VALUE}).")
    String model;

    @Option(names = "--client-header", defaultValue = "X-Client-Id", description = "Header carrying the client id (default: ${DEFAULT-VALUE}).")
    String clientHeader;

    @Option(names = "--class-header", defaultValue = "X-Prefix-Class", description = "Header carrying the prefix class (default: ${DEFAULT-VALUE}).")
    String classHeader;

    @Option(names = "--max-in-flight", defaultValue = "2048", description = "Requests open at once at most (default: ${DEFAULT-VALUE}).")
    int maxInFlight;

    @Option(names = "--timeout", defaultValue = "10min", description = "A request's longest life (default: ${DEFAULT-VALUE}).")
    String timeout;

    @Option(names = "--out", paramLabel = "DIR", description = "Write results.csv (one row a request) and summary.csv here.")
    Path out;

    @Override
    public Integer call() throws Exception {
        double seconds = Durations.seconds(duration);
        SyntheticWorkload workload = new SyntheticWorkload(stream.workload(), SyntheticWorkload.Settings.defaults(seconds, stream.seed()).scaled(rateScale));
        Duration requestTimeout = Durations.parse(timeout);
        LoadGenerator generator = new LoadGenerator(new LoadGenerator.Settings(targets, model, clientHeader, classHeader, maxInFlight, requestTimeout));
        PrintWriter console = spec.commandLine().getOut();
        console.printf(Locale.ROOT, "kvr load: %s (seed %d, %s, rate x%.2f) to %s%n", stream.workload(), stream.seed(), duration, rateScale, targets);
        console.flush();
        List<LoadGenerator.Result> results = generator.run(workload);
        List<LoadSummary> summary = LoadSummary.of(results);
        summary.forEach(console::println);
        if (out != null) {
            Files.createDirectories(out);
            List<String> rows = new ArrayList<>();
            rows.add("seq,class,status,ttft_ms,total_ms,prompt_tokens,cached_tokens,upstream,route");
            for (LoadGenerator.Result r : results) {
                rows.add(String.format(Locale.ROOT, "%d,%s,%d,%.1f,%.1f,%d,%d,%s,%s", r.seq(), r.requestClass(), r.status(), r.ttftMs(), r.totalMs(),
                        r.promptTokens(), r.cachedTokens(), csvField(r.upstream()), csvField(r.route())));
            }
            Files.write(out.resolve("results.csv"), rows);
            List<String> summaryRows = new ArrayList<>(List.of(LoadSummary.CSV_HEADER));
            summary.forEach(s -> summaryRows.add(s.csv()));
            Files.write(out.resolve("summary.csv"), summaryRows);
        }
        return summary.get(0).answered() > 0 ? 0 : 1;
    }

    /** A header's value as one CSV field: quoted when it holds a comma (nginx lists every upstream tried: "a, b"), a quote or a line end. */
    static String csvField(String value) {
        if (value.indexOf(',') < 0 && value.indexOf('"') < 0 && value.indexOf('\n') < 0 && value.indexOf('\r') < 0) {
            return value;
        }
        return '"' + value.replace("\"", "\"\"") + '"';
    }
}
