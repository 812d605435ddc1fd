package dev.kvrouter.stack;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/** Starting, recognising and stopping the stack's processes, always by pid. */
final class Processes {

    private static final Path SETSID = Path.of("/usr/bin/setsid");

    private Processes() {}

    /**
     * Starts a long-running service with stdin closed and stdout/stderr appended to a log. It runs in
     * its own session (setsid execs in place, so the pid is kept) so that Ctrl-C on the terminal that
     * ran {@code up} does not take the stack down with it.
     */
    static Process startDetached(List<String> command, Path workDir, Path logFile) {
        return startDetached(command, workDir, logFile, java.util.Map.of());
    }

    /** As {@link #startDetached(List, Path, Path)}, with these variables added to its environment (a password, say). */
    static Process startDetached(List<String> command, Path workDir, Path logFile, java.util.Map<String, String> environment) {
        List<String> full = new ArrayList<>();
        if (Files.isExecutable(SETSID)) {
            full.add(SETSID.toString());
        }
        full.addAll(command);
        ProcessBuilder pb = new ProcessBuilder(full)
                .directory(workDir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
        pb.environment().putAll(environment);
        try {
            return pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + command.get(0), e);
        }
    }

    /** Runs a command to completion (bounded), output to a log; returns its exit code. */
    static int runToCompletion(List<String> command, Path workDir, Path logFile, Duration timeout) {
        return runToCompletion(command, workDir, logFile, timeout, java.util.Map.of());
    }

    /** As {@link #runToCompletion(List, Path, Path, Duration)}, with these variables added to its environment. */
    static int runToCompletion(List<String> command, Path workDir, Path logFile, Duration timeout, java.util.Map<String, String> environment) {
        Process p = startDetached(command, workDir, logFile, environment);
        try {
            if (!p.waitFor(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(command.get(0) + " did not finish within " + timeout + "; see " + logFile);
            }
            return p.exitValue();
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + command.get(0), e);
        }
    }

    /**
     * The live process with this pid, if it is still the one that was recorded: same start time when
     * known, else a command line containing {@code marker}. A recycled pid is never touched.
     */
    static Optional<ProcessHandle> ours(long pid, OptionalLong startedMillis, String marker) {
        Optional<ProcessHandle> handle = ProcessHandle.of(pid).filter(ProcessHandle::isAlive);
        if (handle.isEmpty()) {
            return Optional.empty();
        }
        ProcessHandle.Info info = handle.get().info();
        if (startedMillis.isPresent()) {
            Optional<Instant> start = info.startInstant();
            // /proc start times are in clock ticks: allow for the rounding between two reads.
            return start.isPresent() && Math.abs(start.get().toEpochMilli() - startedMillis.getAsLong()) < 1000
                    ? handle : Optional.empty();
        }
        return commandLine(handle.get()).contains(marker) ? handle : Optional.empty();
    }

    /** Every live process whose command line carries {@code marker}. */
    static List<ProcessHandle> withMarker(String marker) {
        return ProcessHandle.allProcesses()
                .filter(p -> p.pid() != ProcessHandle.current().pid())
                .filter(p -> commandLine(p).contains(marker))
                .toList();
    }

    static String commandLine(ProcessHandle p) {
        // Info.commandLine() is empty for processes whose arguments the JDK cannot read; /proc has them.
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(p.pid()), "cmdline"));
            return new String(raw).replace('\0', ' ');
        } catch (IOException | RuntimeException e) {
            return p.info().commandLine().orElse("");
        }
    }

    /** SIGTERM, then SIGKILL for whatever is still alive after {@code grace}. Returns the pids stopped. */
    static List<Long> stop(List<ProcessHandle> processes, Duration grace) {
        List<Long> stopped = new ArrayList<>();
        for (ProcessHandle p : processes) {
            p.destroy();
        }
        long deadline = System.nanoTime() + grace.toNanos();
        for (ProcessHandle p : processes) {
            long left = Math.max(0, deadline - System.nanoTime());
            try {
                p.onExit().get(left, java.util.concurrent.TimeUnit.NANOSECONDS);
            } catch (Exception timeoutOrInterrupt) {
                p.destroyForcibly();
                try {
                    p.onExit().get(5, java.util.concurrent.TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new IllegalStateException("process " + p.pid() + " survived SIGKILL", e);
                }
            }
            stopped.add(p.pid());
        }
        return stopped;
    }

    /** True when nothing listens on 127.0.0.1:port. */
    static boolean portFree(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Waits until a server the caller just started answers; fails, with the end of its log, when
     * the process exits first or {@code timeout} passes (the caller stops what it started).
     */
    static void awaitAnswering(Process process, java.util.function.BooleanSupplier answers, Duration timeout, String what, Path log) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!answers.getAsBoolean()) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException(what + " did not start:\n" + tail(log, 30));
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while starting " + what, e);
            }
        }
    }

    static String tail(Path logFile, int lines) {
        try {
            List<String> all = Files.readAllLines(logFile);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException | RuntimeException e) {
            return "(no log at " + logFile + ")";
        }
    }
}
