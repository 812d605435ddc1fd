package dev.kvrouter.stack;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A server program the stack runs (redis-server, prometheus): from its environment variable, else
 * PATH, else installed with apt-get when running as root on Debian or Ubuntu (once; CI machines
 * start bare), else an error that says how to install it.
 */
final class DebianPackages {

    private DebianPackages() {}

    /**
     * @param executable the program's name on PATH
     * @param aptPackage the Debian package that brings it
     * @param envVar     names a program that is not on PATH
     * @param otherwise  how to install it elsewhere, for the error
     */
    static Path ensure(String executable, String aptPackage, String envVar, String otherwise, PrintStream out) {
        Optional<Path> found = find(executable, envVar);
        if (found.isPresent()) {
            return found.get();
        }
        install(executable + " is not on PATH", List.of(aptPackage), otherwise + ", or set " + envVar + "=/path/to/" + executable, out);
        return find(executable, envVar).orElseThrow(() -> new IllegalStateException(
                "apt-get installed " + aptPackage + " but " + executable + " is not on PATH; set " + envVar));
    }

    /**
     * Installs the packages with apt-get when running as root on Debian or Ubuntu (once: the caller
     * checks first), else throws an error that starts with {@code missing} and says how to install them.
     */
    static void install(String missing, List<String> aptPackages, String otherwise, PrintStream out) {
        String packages = String.join(" ", aptPackages);
        if (!isRoot() || onPath("apt-get").isEmpty()) {
            throw new IllegalStateException(missing + ". Install it: 'sudo apt-get install -y " + packages
                    + "' (Debian/Ubuntu), " + otherwise);
        }
        out.println(missing + ": installing " + packages + " with apt-get (once)");
        Path log = Path.of(System.getProperty("java.io.tmpdir"), "kvr-apt-" + aptPackages.get(0) + ".log");
        ProcessBuilder.Redirect append = ProcessBuilder.Redirect.appendTo(log.toFile());
        List<String> install = new ArrayList<>(List.of("apt-get", "install", "-y", "-q", "--no-install-recommends"));
        install.addAll(aptPackages);
        for (List<String> cmd : List.of(List.of("apt-get", "update", "-q"), install)) {
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(append);
            pb.environment().put("DEBIAN_FRONTEND", "noninteractive");
            try {
                Process p = pb.start();
                if (!p.waitFor(10, java.util.concurrent.TimeUnit.MINUTES) || p.exitValue() != 0) {
                    p.destroyForcibly();
                    throw new IllegalStateException(String.join(" ", cmd) + " failed; see " + log + ":\n" + Processes.tail(log, 15));
                }
            } catch (IOException e) {
                throw new IllegalStateException("cannot run " + cmd.get(0) + ": " + e.getMessage(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while installing " + packages, e);
            }
        }
    }

    /** The program {@code envVar} names (which must be executable), else the one on PATH. */
    static Optional<Path> find(String executable, String envVar) {
        String configured = System.getenv(envVar);
        if (configured != null && !configured.isBlank()) {
            Path p = Path.of(configured);
            if (!Files.isExecutable(p)) {
                throw new IllegalStateException(envVar + "=" + configured + " is not an executable file");
            }
            return Optional.of(p);
        }
        return onPath(executable);
    }

    static Optional<Path> onPath(String name) {
        List<String> dirs = new ArrayList<>(List.of(System.getenv().getOrDefault("PATH", "").split(":")));
        dirs.addAll(List.of("/usr/bin", "/usr/sbin", "/usr/local/bin", "/opt/homebrew/bin"));
        return dirs.stream().filter(d -> !d.isBlank()).map(d -> Path.of(d, name)).filter(Files::isExecutable).findFirst();
    }

    private static boolean isRoot() {
        try {
            Process p = new ProcessBuilder("id", "-u").start();
            String uid = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
            p.waitFor(5, java.util.concurrent.TimeUnit.SECONDS);
            return "0".equals(uid);
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
