package dev.kvrouter.common.cli;

import picocli.CommandLine.Option;

/** {@code --topics-prefix PREFIX}: the prefix of every topic name, none by default. */
public final class TopicsPrefixOption {

    @Option(names = "--topics-prefix", paramLabel = "PREFIX", defaultValue = "",
            description = "Prefix of every topic name, as given to 'kvr topics apply --prefix' (a demo run prints its own: "
                    + "'topics demo-xxxx.*'; default: none).")
    String prefix;

    public String value() {
        return prefix == null ? "" : prefix;
    }
}
