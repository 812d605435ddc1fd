package dev.kvrouter.sim;

import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.sim.engine.EngineConfig;
import dev.kvrouter.sim.engine.Failure;
import dev.kvrouter.sim.metrics.PolicyMetrics.PolicyResult;
import dev.kvrouter.sim.metrics.TruthLog;
import dev.kvrouter.sim.policy.Policy;
import dev.kvrouter.sim.sink.EventSink;
import dev.kvrouter.sim.workload.SimRequest;
import dev.kvrouter.sim.workload.Workload;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * Runs one request stream through several fleets at once, one per policy, each with its own
 * engines, all advanced in lockstep on one {@link VirtualClock}: every fleet sees the same
 * arrivals and the same failures at the same virtual times.
 */
public final class SimRunner {

    /**
     * Paced runs (a real pipeline in the loop): virtual time before the first request, for the
     * engines' first reports to cross the pipeline into the view (about a second here).
     */
    public static final double PACED_LEAD_IN_MS = 5_000;

    /**
     * @param engines        engines per fleet
     * @param sampleMs       interval of the load (Gini) samples
     * @param windowMs       width of the report's time windows
     * @param usdPerMillion  input price, dollars per million prompt tokens
     * @param speed          0 unpaced; else virtual seconds per wall second
     * @param runId          prefix of request ids (unique per run, so a pipeline can tell runs apart)
     * @param truthLog       where each placement is written beside the true caches ({@link TruthLog}); null: nowhere
     */
    public record Settings(int engines, EngineConfig engine, List<Failure> failures, double sampleMs, double windowMs,
                           double usdPerMillion, double speed, String runId, java.nio.file.Path truthLog) {

        public static Settings defaults(int engines, EngineConfig engine) {
            return new Settings(engines, engine, List.of(), 1_000, 60_000, 0.5, 0, "sim", null);
        }

        public Settings withFailures(List<Failure> f) {
            return new Settings(engines, engine, f, sampleMs, windowMs, usdPerMillion, speed, runId, truthLog);
        }

        public Settings withWindowMs(double w) {
            return new Settings(engines, engine, failures, sampleMs, w, usdPerMillion, speed, runId, truthLog);
        }

        public Settings withSampleMs(double s) {
            return new Settings(engines, engine, failures, s, windowMs, usdPerMillion, speed, runId, truthLog);
        }

        public Settings withUsdPerMillion(double usd) {
            return new Settings(engines, engine, failures, sampleMs, windowMs, usd, speed, runId, truthLog);
        }

        public Settings withSpeed(double s) {
            return new Settings(engines, engine, failures, sampleMs, windowMs, usdPerMillion, s, runId, truthLog);
        }

        public Settings withTruthLog(java.nio.file.Path file) {
            return new Settings(engines, engine, failures, sampleMs, windowMs, usdPerMillion, speed, runId, file);
        }

        public Settings withRunId(String id) {
            return new Settings(engines, engine, failures, sampleMs, windowMs, usdPerMillion, speed, id, truthLog);
        }
    }

    /** A fleet to run: its policy and where its records go ({@link EventSink#DISCARD} for comparison only). */
    public record FleetSpec(Supplier<Policy> policy, EventSink sink) {}

    /** What a run produced. */
    public record Result(String workload, Settings settings, long requests, double virtualEndMs, double wallSeconds, List<PolicyResult> policies) {}

    private final Settings settings;
    private final PrintStream progress;

    /** @param progress where the progress bar goes (stderr), or null for none */
    public SimRunner(Settings settings, PrintStream progress) {
        this.settings = settings;
        this.progress = progress;
    }

    public Result run(Workload workload, List<FleetSpec> specs) throws InterruptedException {
        return run(workload, specs, -1);
    }

    /** @param expectedRequests for the progress bar; -1 when unknown */
    public Result run(Workload workload, List<FleetSpec> specs, long expectedRequests) throws InterruptedException {
        long wallStart = System.nanoTime();
        VirtualClock clock = new VirtualClock(settings.speed());
        List<Fleet> fleets = new ArrayList<>();
        for (FleetSpec spec : specs) {
            fleets.add(new Fleet(spec.policy().get(), settings.engines(), settings.engine(), clock, spec.sink(), settings.windowMs()));
        }
        try (TruthLog truth = settings.truthLog() == null ? null : TruthLog.open(settings.truthLog())) {
            fleets.forEach(f -> f.recordTruth(truth));
            return run(workload, fleets, clock, expectedRequests, wallStart);
        }
    }

    private Result run(Workload workload, List<Fleet> fleets, VirtualClock clock, long expectedRequests, long wallStart) throws InterruptedException {
        CanonicalBlockHasher hasher = new CanonicalBlockHasher(settings.engine().blockTokens());
        Iterator<SimRequest> requests = workload.requests();
        long[] arrived = {0};
        boolean[] arrivalsDone = {!requests.hasNext()};
        java.util.function.BooleanSupplier active = () -> !arrivalsDone[0] || fleets.stream().anyMatch(f -> f.pending() > 0);

        for (Fleet f : fleets) {
            f.engines().forEach(e -> e.startHeartbeats(active));
        }
        // Paced, a real pipeline routes a fleet: its engines report for a lead-in before the first
        // request (and the first failure), as to a view that was running before the traffic came;
        // the in-memory policies know the fleet from the start either way.
        double leadIn = clock.paced() ? PACED_LEAD_IN_MS : 0;
        for (Failure failure : settings.failures()) {
            if (failure.engine() < 0 || failure.engine() >= settings.engines()) {
                throw new IllegalArgumentException("failure on engine " + failure.engine() + " but the fleet has " + settings.engines());
            }
            clock.at(leadIn + failure.atS() * 1000, () -> fleets.forEach(f -> failure.applyTo(f.engines().get(failure.engine()))));
        }
        clock.at(leadIn + settings.sampleMs(), new Runnable() {
            @Override
            public void run() {
                fleets.forEach(Fleet::sampleLoads);
                if (active.getAsBoolean()) {
                    clock.after(settings.sampleMs(), this);
                }
            }
        });
        Progress bar = new Progress(progress, expectedRequests);
        if (requests.hasNext()) {
            SimRequest first = requests.next();
            clock.at(leadIn + first.arrivalMs(), new Runnable() {
                SimRequest current = first;

                @Override
                public void run() {
                    String id = settings.runId() + "-" + current.seq();
                    long[] chain = hasher.chain(settings.engine().model(), null, current.prompt().tokens(), null);
                    for (Fleet f : fleets) {
                        f.arrive(id, current, chain);
                    }
                    arrived[0]++;
                    bar.update(arrived[0], clock.nowMs());
                    if (requests.hasNext()) {
                        current = requests.next();
                        clock.at(Math.max(clock.nowMs(), leadIn + current.arrivalMs()), this);
                    } else {
                        arrivalsDone[0] = true;
                    }
                }
            });
        }
        clock.runUntil(Double.MAX_VALUE);
        bar.done(arrived[0], clock.nowMs());
        for (Fleet f : fleets) {
            f.sink().flush();
        }
        List<PolicyResult> results = new ArrayList<>();
        for (Fleet f : fleets) {
            results.add(f.metrics().result(settings.usdPerMillion()));
            f.policy().close();
        }
        return new Result(workload.name(), settings, arrived[0], clock.nowMs(), (System.nanoTime() - wallStart) / 1e9, results);
    }

    /** A one-line progress bar on stderr, redrawn at most every 1 % of the requests. */
    private static final class Progress {
        private final PrintStream out;
        private final long expected;
        private long lastDrawn = -1;

        Progress(PrintStream out, long expected) {
            this.out = out;
            this.expected = expected;
        }

        void update(long n, double virtualMs) {
            if (out == null) {
                return;
            }
            long step = expected > 0 ? Math.max(1, expected / 100) : 500;
            if (n - lastDrawn < step) {
                return;
            }
            lastDrawn = n;
            draw(n, virtualMs);
        }

        void done(long n, double virtualMs) {
            if (out != null) {
                draw(n, virtualMs);
                out.println();
            }
        }

        private void draw(long n, double virtualMs) {
            String time = String.format(Locale.ROOT, "virtual %d:%02d", (long) (virtualMs / 60_000), (long) (virtualMs / 1000) % 60);
            if (expected > 0) {
                int width = 30;
                int filled = (int) Math.min(width, n * width / expected);
                out.printf(Locale.ROOT, "\r[%s%s] %3d%% %d/%d requests, %s", "#".repeat(filled), " ".repeat(width - filled),
                        n * 100 / expected, n, expected, time);
            } else {
                out.printf(Locale.ROOT, "\r%d requests, %s", n, time);
            }
            out.flush();
        }
    }
}
