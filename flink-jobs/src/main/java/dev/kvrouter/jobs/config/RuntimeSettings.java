package dev.kvrouter.jobs.config;

import static dev.kvrouter.jobs.config.KvRouterJobOptions.*;

import java.io.Serializable;
import java.time.Duration;

/** How the job runs: checkpoints, state backend, network buffers, parallelism. */
public record RuntimeSettings(Duration checkpointInterval, String stateBackend, String checkpointDir, Duration bufferTimeout, int parallelism)
        implements Serializable {

    static RuntimeSettings read(OptionReader r) {
        return new RuntimeSettings(r.get(CHECKPOINT_INTERVAL), r.get(STATE_BACKEND), r.get(CHECKPOINT_DIR), r.get(BUFFER_TIMEOUT),
                r.get(PARALLELISM));
    }
}
