package dev.kvrouter.jobs.config;

import static dev.kvrouter.jobs.config.KvRouterJobOptions.*;

import java.io.Serializable;
import java.time.Duration;

/** Replicas of hot prefixes: how many engines should hold one, how often a recommendation may go out, how much of it. */
public record ReplicaSettings(int min, int max, Duration interval, int prefixBlocks) implements Serializable {

    static ReplicaSettings read(OptionReader r) {
        ReplicaSettings s = new ReplicaSettings(r.get(REPLICAS_MIN), r.get(REPLICAS_MAX), r.get(REPLICAS_INTERVAL), r.get(REPLICAS_PREFIX_BLOCKS));
        if (r.valid(REPLICAS_MIN, REPLICAS_MAX) && s.max() < s.min()) {
            r.problem(REPLICAS_MAX.key() + " (" + s.max() + ") must be at least " + REPLICAS_MIN.key() + " (" + s.min() + ")");
        }
        return s;
    }
}
