package dev.kvrouter.jobs.config;

import static dev.kvrouter.jobs.config.KvRouterJobOptions.*;

import java.io.Serializable;

/** The largest input the job accepts; an event beyond one goes to the dead-letter topic with the limit it broke. */
public record InputLimits(int maxEventsPerBatch, int maxHashesPerEvent, int maxBlockSize, int maxStringLength) implements Serializable {

    static InputLimits read(OptionReader r) {
        return new InputLimits(r.get(MAX_EVENTS_PER_BATCH), r.get(MAX_HASHES_PER_EVENT), r.get(MAX_BLOCK_SIZE), r.get(MAX_STRING_LENGTH));
    }
}
