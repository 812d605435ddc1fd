package dev.kvrouter.jobs.config;

import static dev.kvrouter.jobs.config.KvRouterJobOptions.*;

import java.io.Serializable;
import java.time.Duration;

/** How the job tracks each engine: how long its blocks are expected to stay, when silence makes it suspect or dead, its caps. */
public record EngineSettings(Duration defaultResidency, Duration maxResidency, double residencyLearningRate, Duration suspectAfter,
        Duration deadAfter, Duration stallLimit, Duration forgetAfter, int queueCap, int maxBlocks, Duration updateInterval, boolean kvRoom) implements Serializable {

    static EngineSettings read(OptionReader r) {
        EngineSettings e = new EngineSettings(r.get(DEFAULT_RESIDENCY), r.get(MAX_RESIDENCY), r.get(RESIDENCY_LEARNING_RATE),
                r.get(SUSPECT_AFTER), r.get(DEAD_AFTER), r.get(STALL_LIMIT), r.get(FORGET_AFTER), r.get(QUEUE_CAP), r.get(MAX_BLOCKS_PER_ENGINE),
                r.get(ENGINE_UPDATE_INTERVAL), r.get(KV_ROOM));
        if (r.valid(SUSPECT_AFTER, DEAD_AFTER) && e.deadAfter().compareTo(e.suspectAfter()) <= 0) {
            r.problem(DEAD_AFTER.key() + " (" + e.deadAfter() + ") must be longer than " + SUSPECT_AFTER.key() + " (" + e.suspectAfter() + ")");
        }
        if (r.valid(DEFAULT_RESIDENCY, MAX_RESIDENCY) && e.maxResidency().compareTo(e.defaultResidency()) < 0) {
            r.problem(MAX_RESIDENCY.key() + " must be at least " + DEFAULT_RESIDENCY.key());
        }
        return e;
    }
}
