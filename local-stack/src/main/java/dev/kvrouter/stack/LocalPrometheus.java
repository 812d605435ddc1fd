package dev.kvrouter.stack;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A private Prometheus on a free loopback port, scraping the given targets every second (the demo's
 * job, a test's), with optional alert rules; its data in its own folder, stopped by its pid. The
 * binary comes from {@value #EXECUTABLE_ENV}, PATH, or Debian's {@code prometheus} package.
 */
public final class LocalPrometheus implements AutoCloseable {

    /** Set to use a prometheus that is not on PATH. */
    public static final String EXECUTABLE_ENV = "KVR_PROMETHEUS";

    private final int port;
    private final Process process;

    private LocalPrometheus(int port, Process process) {
        this.port = port;
        this.process = process;
    }

    /**
     * Starts it and waits until it is ready.
     *
     * @param dir     its config, data and log
     * @param targets host:port pairs serving {@code /metrics}, loopback ones in tests
     * @param rules   an alert rules file to load, or null
     */
    public static LocalPrometheus start(Path dir, List<String> targets, Path rules, PrintStream out) {
        Path executable = DebianPackages.ensure("prometheus", "prometheus", EXECUTABLE_ENV, "'brew install prometheus' (macOS)", out);
        int port = Ports.free();
        try {
            Files.createDirectories(dir.resolve("data"));
            String ruleFiles = "";
            if (rules != null) {
                Files.copy(rules, dir.resolve("rules.yml"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                ruleFiles = "rule_files: [rules.yml]\n";
            }
            Files.writeString(dir.resolve("prometheus.yml"), "global: {scrape_interval: 1s, evaluation_interval: 1s}\n" + ruleFiles
                    + "scrape_configs:\n  - job_name: kv-router\n    static_configs:\n      - targets: ["
                    + targets.stream().map(t -> "\"" + t + "\"").collect(Collectors.joining(", ")) + "]\n");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write Prometheus' config in " + dir, e);
        }
        Process process = Processes.startDetached(List.of(executable.toString(),
                "--config.file=" + dir.resolve("prometheus.yml"), "--storage.tsdb.path=" + dir.resolve("data"),
                "--storage.tsdb.retention.time=1d", "--web.listen-address=127.0.0.1:" + port), dir, dir.resolve("prometheus.log"));
        LocalPrometheus prometheus = new LocalPrometheus(port, process);
        try {
            Processes.awaitAnswering(process, prometheus::ready, Duration.ofSeconds(60), "prometheus on port " + port,
                    dir.resolve("prometheus.log"));
        } catch (RuntimeException e) {
            prometheus.close();
            throw e;
        }
        return prometheus;
    }

    private boolean ready() {
        try {
            return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url() + "/-/ready")).timeout(Duration.ofSeconds(2))
                    .build(), HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Its web UI and HTTP API, e.g. {@code url() + "/api/v1/query?query=..."}. */
    public String url() {
        return "http://127.0.0.1:" + port;
    }

    @Override
    public void close() {
        Processes.stop(List.of(process.toHandle()).stream().filter(ProcessHandle::isAlive).toList(), Duration.ofSeconds(10));
    }
}
