package dev.kvrouter.jobs.config;

import static dev.kvrouter.jobs.config.KvRouterJobOptions.*;

import java.io.Serializable;
import java.time.Duration;

/** The view in Redis: where it is, how its keys and entries are laid out, what kvr_pick reads from its meta key, how long it lives. */
public record ViewSettings(String redisUrl, String keyPrefix, int chunkTokens, int tagDepth, double busyFactor, double confidenceFloor,
        double clientCap, int clientMinInflight, Duration ttl, Duration flushInterval, Duration reservationTtl) implements Serializable {

    static ViewSettings read(OptionReader r) {
        ViewSettings v = new ViewSettings(r.get(REDIS_URL), r.get(VIEW_KEY_PREFIX), r.get(CHUNK_TOKENS), r.get(TAG_DEPTH), r.get(BUSY_FACTOR),
                r.get(CONFIDENCE_FLOOR), r.get(CLIENT_CAP), r.get(CLIENT_MIN_INFLIGHT), r.get(VIEW_TTL), r.get(VIEW_FLUSH_INTERVAL),
                r.get(RESERVATION_TTL));
        if (r.valid(VIEW_TTL, VIEW_FLUSH_INTERVAL) && v.ttl().compareTo(v.flushInterval().multipliedBy(3)) < 0) {
            r.problem(VIEW_TTL.key() + " (" + v.ttl() + ") must be at least 3 times " + VIEW_FLUSH_INTERVAL.key() + " ("
                    + v.flushInterval() + "), or the view blinks out between two writes");
        }
        return v;
    }

    /** ln(1 / floor): an entry lives this many residency times. */
    public double lifetimesToFloor() {
        return Math.log(1 / confidenceFloor);
    }
}
