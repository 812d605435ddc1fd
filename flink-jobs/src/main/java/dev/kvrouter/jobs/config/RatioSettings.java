package dev.kvrouter.jobs.config;

import static dev.kvrouter.jobs.config.KvRouterJobOptions.*;

import java.io.Serializable;
import java.time.Duration;

/** The per-class ratios: their windows, how prefixes are classed, the smallest window the alerts judge, the staleness alert. */
public record RatioSettings(Duration window, Duration slidingWindow, Duration slide, Duration joinBound, int hotAt, int warmAt,
        int sketchCapacity, int maxClasses, int affinityMinRequests, double alertStalenessAbove)
        implements Serializable {

    static RatioSettings read(OptionReader r) {
        RatioSettings s = new RatioSettings(r.get(RATIOS_WINDOW), r.get(RATIOS_SLIDING_WINDOW), r.get(RATIOS_SLIDE), r.get(RATIOS_JOIN_BOUND),
                r.get(RATIOS_HOT_AT), r.get(RATIOS_WARM_AT), r.get(RATIOS_SKETCH_CAPACITY), r.get(RATIOS_MAX_CLASSES),
                r.get(AFFINITY_MIN_REQUESTS), r.get(ALERT_STALENESS_ABOVE));
        if (r.valid(RATIOS_HOT_AT, RATIOS_WARM_AT) && s.hotAt() <= s.warmAt()) {
            r.problem(RATIOS_HOT_AT.key() + " (" + s.hotAt() + ") must be above " + RATIOS_WARM_AT.key() + " (" + s.warmAt() + ")");
        }
        if (r.valid(RATIOS_SLIDING_WINDOW, RATIOS_SLIDE) && s.slidingWindow().compareTo(s.slide()) < 0) {
            r.problem(RATIOS_SLIDING_WINDOW.key() + " must be at least " + RATIOS_SLIDE.key());
        }
        return s;
    }
}
