package dev.kvrouter.cli;

import dev.kvrouter.jobs.view.KvRouterJob;
import dev.kvrouter.stack.StackCommand;
import dev.kvrouter.topics.TopicsCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code ./kvr}: one entry point; each module owns its commands and this only gathers them. */
@Command(name = "kvr", mixinStandardHelpOptions = true, versionProvider = Kvr.Version.class,
        description = {"kv-router: the data plane for KV-cache-aware routing of LLM inference.", ""},
        subcommands = {dev.kvrouter.cli.demo.DemoCommand.class, StackCommand.class, TopicsCommand.class, JobCommand.class, BenchCommand.class, dev.kvrouter.bridge.BridgeCommand.class, dev.kvrouter.gateway.GatewayCommand.class, dev.kvrouter.httpfleet.EnginesCommand.class, dev.kvrouter.httpfleet.LoadCommand.class, dev.kvrouter.sim.SimCommand.class, dev.kvrouter.sim.ReplayCommand.class, dev.kvrouter.sim.explain.ExplainCommand.class, CommandLine.HelpCommand.class},
        footer = {"", "Start here:  ./kvr demo   (or: ./kvr stack up, ./kvr topics apply, ./kvr job run)"})
public final class Kvr {

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** Every command, with the job's option list under 'kvr job run --help' and the error handler. */
    static CommandLine commandLine() {
        CommandLine cli = new CommandLine(new Kvr());
        // The job options' list, from the job itself, under 'kvr job run --help'.
        CommandLine run = cli.getSubcommands().get("job").getSubcommands().get("run");
        run.getCommandSpec().usageMessage().footer("", KvRouterJob.help());
        // A failed command prints its message, not a stack trace; the trace is one flag away.
        cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
            cmd.getErr().println("kvr " + cmd.getCommandName() + ": " + e.getMessage());
            if (System.getenv("KVR_DEBUG") != null) {
                e.printStackTrace(cmd.getErr());
            } else {
                cmd.getErr().println("(set KVR_DEBUG=1 for the stack trace)");
            }
            return 1;
        });
        return cli;
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Kvr.class.getPackage().getImplementationVersion();
            return new String[] {"kv-router " + (v == null ? "(development build)" : v)};
        }
    }
}
