package dev.kvrouter.jobs.config;

import static dev.kvrouter.jobs.config.KvRouterJobOptions.*;

import java.io.Serializable;
import java.time.Duration;

/** How the job runs: checkpoints, state backend and its changelog, network buffers, parallelism. */
public record RuntimeSettings(Duration checkpointInterval, String stateBackend, String checkpointDir, boolean stateChangelog,
                              Duration bufferTimeout, int parallelism) implements Serializable {

    static RuntimeSettings read(OptionReader r) {
        RuntimeSettings s = new RuntimeSettings(r.get(CHECKPOINT_INTERVAL), r.get(STATE_BACKEND), r.get(CHECKPOINT_DIR), r.get(STATE_CHANGELOG),
                r.get(BUFFER_TIMEOUT), r.get(PARALLELISM));
        if (r.valid(STATE_CHANGELOG, CHECKPOINT_DIR) && s.stateChangelog() && s.checkpointDir().isBlank()) {
            r.problem(STATE_CHANGELOG.key() + " needs " + CHECKPOINT_DIR.key() + ": the state changelog is written beside the checkpoints");
        }
        return s;
    }

    /** Where the state changelog goes: beside the checkpoints. */
    public String changelogDir() {
        return checkpointDir().endsWith("/") ? checkpointDir() + "changelog" : checkpointDir() + "/changelog";
    }
}
