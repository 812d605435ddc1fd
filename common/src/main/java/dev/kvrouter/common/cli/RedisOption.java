package dev.kvrouter.common.cli;

import picocli.CommandLine.Option;

/** {@code --redis-url URL}, default {@code $REDIS_URL}. */
public final class RedisOption extends ServiceOption {

    @Option(names = "--redis-url", paramLabel = "URL",
            description = "Redis holding the routing view, redis://host:port or redis-cluster://host:port (default: $REDIS_URL, likewise).")
    String url;

    public RedisOption() {
        super("--redis-url URL", REDIS_URL);
    }

    @Override
    protected String given() {
        return url;
    }
}
