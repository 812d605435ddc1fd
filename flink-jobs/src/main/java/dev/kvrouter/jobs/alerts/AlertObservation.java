package dev.kvrouter.jobs.alerts;

import dev.kvrouter.alerts.AlertKind;

/**
 * One look at something an alert watches: whether it is past its threshold right now. (A record: Flink
 * serializes it as a POJO, the kind as its enum.)
 */
public record AlertObservation(AlertKind kind, String subject, double value, double threshold, boolean breached, String message,
                               long tsMs) {

    /** The key of the alert this observation is about. */
    public String key() {
        return kind + "/" + subject;
    }
}
