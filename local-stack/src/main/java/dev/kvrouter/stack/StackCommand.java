package dev.kvrouter.stack;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code kvr stack up|down|status|env}: the local stack from the command line. */
@Command(name = "stack", mixinStandardHelpOptions = true,
        description = "Run real Kafka (KRaft), Apicurio Registry and Redis on 127.0.0.1, without Docker.",
        subcommands = {StackCommand.Up.class, StackCommand.Down.class, StackCommand.Status.class, StackCommand.Env.class})
public final class StackCommand {

    /** Where the stack keeps its state unless --state-dir says otherwise. */
    public static final String STATE_DIR_ENV = "KVR_STATE_DIR";

    public static void main(String[] args) {
        System.exit(new CommandLine(new StackCommand()).execute(args));
    }

    static class StateDirOption {
        @Option(names = "--state-dir", paramLabel = "DIR",
                description = "Folder of the stack's state file, data and logs (default: $" + STATE_DIR_ENV + ", else ./.kvr/stack).")
        Path stateDir;

        LocalStack.Options options() {
            Path dir = stateDir != null ? stateDir
                    : Path.of(System.getenv().getOrDefault(STATE_DIR_ENV, ".kvr/stack"));
            return LocalStack.Options.defaults(dir);
        }

        LocalStack stack() {
            return new LocalStack(options());
        }
    }

    @Command(name = "up", mixinStandardHelpOptions = true,
            description = "Start the stack (or reuse the one running in the state folder), wait until every service "
                    + "answers, and print its addresses as KAFKA_BOOTSTRAP=, SCHEMA_REGISTRY_URL=, REDIS_URL= lines "
                    + "(and KVR_CLIENT_CONFIG= for a secure one). "
                    + "Progress goes to stderr, so 'eval' or 'source' can take stdout.")
    static final class Up implements Callable<Integer> {
        @CommandLine.Mixin
        StateDirOption state = new StateDirOption();

        @Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "120",
                description = "How long to wait for every service to answer (default: ${DEFAULT-VALUE}).")
        int timeoutSeconds;

        @Option(names = "--secure", description = "Kafka on SASL_SSL (SCRAM-SHA-512 users made at start) and Redis on TLS with "
                + "ACL users (the stack's, and the job, balancer and reader of least privilege; the default user off), "
                + "certificates made with keytool; prints KVR_CLIENT_CONFIG=, the client config every kv-router command "
                + "reads. README, \"Security\".")
        boolean secure;

        @Override
        public Integer call() {
            // Progress to stderr, so stdout is only the KEY=value lines a script can source.
            LocalStack stack = new LocalStack(state.options()
                    .withReadyTimeout(Duration.ofSeconds(timeoutSeconds)).withOut(System.err).withSecurity(secure));
            StackAddresses addresses = stack.up();
            System.out.print(addresses.toEnvLines());
            System.out.flush();
            return 0;
        }
    }

    @Command(name = "down", mixinStandardHelpOptions = true,
            description = "Stop every process of the stack by pid (also after a killed 'up'); logs are kept.")
    static final class Down implements Callable<Integer> {
        @CommandLine.Mixin
        StateDirOption state = new StateDirOption();

        @Override
        public Integer call() {
            LocalStack stack = state.stack();
            List<Long> stopped = stack.down();
            System.out.println(stopped.isEmpty() ? "no stack process was running in " + stack.stateDir()
                    : "stopped " + stopped.size() + " process(es): " + stopped);
            return 0;
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true,
            description = "Tell which services are running and answering. Exit code 0 when all are, 3 otherwise.")
    static final class Status implements Callable<Integer> {
        @CommandLine.Mixin
        StateDirOption state = new StateDirOption();

        @Override
        public Integer call() {
            LocalStack stack = state.stack();
            List<LocalStack.ServiceStatus> statuses = stack.status();
            System.out.println("stack in " + stack.stateDir());
            System.out.printf("%-9s %-8s %-10s %s%n", "SERVICE", "PID", "STATE", "ADDRESS");
            boolean allUp = true;
            for (LocalStack.ServiceStatus s : statuses) {
                String st = s.answering() ? "up" : s.running() ? "starting" : "down";
                allUp &= s.answering();
                System.out.printf("%-9s %-8s %-10s %s%n", s.service().key(),
                        s.pid().isPresent() && s.running() ? Long.toString(s.pid().getAsLong()) : "-", st, s.address());
            }
            return allUp ? 0 : 3;
        }
    }

    @Command(name = "env", mixinStandardHelpOptions = true,
            description = "Print the running stack's addresses as export lines, for: eval \"$(./kvr stack env)\". "
                    + "Exit code 3 when no stack is up.")
    static final class Env implements Callable<Integer> {
        @CommandLine.Mixin
        StateDirOption state = new StateDirOption();

        @Override
        public Integer call() {
            return state.stack().addresses().map(a -> {
                a.asEnv().forEach((k, v) -> System.out.println("export " + k + "=" + v));
                return 0;
            }).orElseGet(() -> {
                System.err.println("no stack is up in " + state.stack().stateDir() + ": run 'kvr stack up'");
                return 3;
            });
        }
    }
}
