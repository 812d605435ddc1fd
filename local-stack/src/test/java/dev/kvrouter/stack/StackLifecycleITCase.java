package dev.kvrouter.stack;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stack as a user drives it: {@code stack up|status|down} as separate processes, each one a JVM
 * like the {@code kvr} script starts. Nothing may be left behind, even when {@code up} is killed.
 */
class StackLifecycleITCase {

    @TempDir
    Path stateDir;

    @Test
    void upReusesThenDownLeavesNoProcessOrPortBehind() throws Exception {
        Result first = run("up");
        assertThat(first.exit).as(first.stderr).isZero();
        Map<String, String> addresses = parseEnv(first.stdout);
        assertThat(addresses).containsOnlyKeys("KAFKA_BOOTSTRAP", "SCHEMA_REGISTRY_URL", "REDIS_URL");
        assertThat(addresses.get("KAFKA_BOOTSTRAP")).startsWith("127.0.0.1:");
        assertThat(first.stderr).contains("stack ready in");

        Result status = run("status");
        assertThat(status.exit).as(status.stdout + status.stderr).isZero();
        assertThat(status.stdout).contains("kafka").contains("registry").contains("redis").doesNotContain("down");

        Result second = run("up");
        assertThat(second.exit).isZero();
        assertThat(second.stderr).contains("reusing");
        assertThat(parseEnv(second.stdout)).isEqualTo(addresses);

        List<Long> pids = recordedPids();
        List<Integer> ports = recordedPorts();
        assertThat(pids).hasSize(3);
        assertThat(pids).allMatch(pid -> ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));

        Result down = run("down");
        assertThat(down.exit).isZero();
        assertNothingLeft(pids, ports);

        Result after = run("status");
        assertThat(after.exit).isEqualTo(3);
        assertThat(run("down").stdout).contains("no stack process was running");
    }

    @Test
    void downStillStopsEverythingAfterUpWasKilledWithSigkill() throws Exception {
        Process up = start("up");
        // The broker is recorded last: once its pid is in the state file, every service is running.
        Path stateFile = stateDir.resolve(StackState.FILE_NAME);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!(Files.exists(stateFile) && Files.readString(stateFile).contains("kafka.pid="))) {
            assertThat(System.nanoTime()).as("kafka pid recorded within 120 s").isLessThan(deadline);
            assertThat(up.isAlive()).as("up is still starting").isTrue();
            Thread.sleep(50);
        }
        up.destroyForcibly(); // SIGKILL: no shutdown hook, no cleanup
        assertThat(up.waitFor(10, TimeUnit.SECONDS)).isTrue();

        List<Long> pids = recordedPids();
        List<Integer> ports = recordedPorts();
        assertThat(pids).hasSize(3);
        assertThat(pids).as("the services outlive a killed 'up'")
                .allMatch(pid -> ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));

        Result down = run("down");
        assertThat(down.exit).as(down.stderr).isZero();
        assertThat(down.stdout).contains("stopped 3 process(es)");
        assertNothingLeft(pids, ports);
    }

    private void assertNothingLeft(List<Long> pids, List<Integer> ports) throws InterruptedException {
        assertThat(pids).as("no stack process alive").noneMatch(pid -> ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));
        assertThat(Processes.withMarker("-Dkvr.stack.dir=" + stateDir.toAbsolutePath().normalize()))
                .as("no JVM carrying this stack's marker").isEmpty();
        // A port can linger a moment after its process died (the kernel closes the socket).
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        List<Integer> busy = ports;
        while (!(busy = ports.stream().filter(p -> !Processes.portFree(p)).toList()).isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertThat(busy).as("ports still bound").isEmpty();
    }

    private List<Long> recordedPids() {
        StackState state = StackState.read(stateDir.toAbsolutePath().normalize()).orElseThrow();
        List<Long> pids = new ArrayList<>();
        for (Service s : Service.values()) {
            state.pid(s).ifPresent(pids::add);
        }
        return pids;
    }

    private List<Integer> recordedPorts() {
        StackState state = StackState.read(stateDir.toAbsolutePath().normalize()).orElseThrow();
        List<Integer> ports = new ArrayList<>();
        for (Service s : Service.values()) {
            OptionalInt port = state.port(s);
            port.ifPresent(ports::add);
        }
        return ports;
    }

    private static Map<String, String> parseEnv(String stdout) {
        return stdout.lines().filter(l -> l.contains("=")).map(l -> l.split("=", 2))
                .collect(Collectors.toMap(kv -> kv[0], kv -> kv[1]));
    }

    private record Result(int exit, String stdout, String stderr) {}

    private Process start(String command) throws IOException {
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), StackCommand.class.getName(), command,
                "--state-dir", stateDir.toString());
        return new ProcessBuilder(cmd)
                .redirectOutput(stateDir.resolve(command + ".out").toFile())
                .redirectError(stateDir.resolve(command + ".err").toFile())
                .start();
    }

    private Result run(String command) throws Exception {
        Process p = start(command);
        if (!p.waitFor(180, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("'stack " + command + "' did not finish in 180 s");
        }
        return new Result(p.exitValue(),
                Files.readString(stateDir.resolve(command + ".out"), StandardCharsets.UTF_8),
                Optional.of(stateDir.resolve(command + ".err")).map(f -> {
                    try {
                        return Files.readString(f, StandardCharsets.UTF_8);
                    } catch (IOException e) {
                        return "";
                    }
                }).orElse(""));
    }
}
