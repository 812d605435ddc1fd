package dev.kvrouter.jobs.alerts;

/** One look at something an alert watches: whether it is past its threshold right now. */
public class AlertObservation {
    /** An {@link dev.kvrouter.alerts.AlertKind} name. */
    public String kind;
    public String subject;
    public double value;
    public double threshold;
    public boolean breached;
    public String message;
    public long tsMs;

    public AlertObservation() {}

    public static AlertObservation of(String kind, String subject, double value, double threshold, boolean breached,
                                      String message, long tsMs) {
        AlertObservation o = new AlertObservation();
        o.kind = kind;
        o.subject = subject;
        o.value = value;
        o.threshold = threshold;
        o.breached = breached;
        o.message = message;
        o.tsMs = tsMs;
        return o;
    }

    /** The key of the alert this observation is about. */
    public String key() {
        return kind + "/" + subject;
    }
}
