package dev.kvrouter.jobs.config;

import static dev.kvrouter.jobs.config.RoutingViewOptions.*;

import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;

/**
 * The routing-view job's configuration: immutable, typed, validated once. {@link #from} reports
 * every problem (missing, malformed, out of range, unknown keys) in one exception.
 */
public record RoutingViewConfig(
        String kafkaBootstrap, String schemaRegistryUrl, String redisUrl, String topicPrefix, String groupId,
        String startingOffsets,
        String viewKeyPrefix, int chunkTokens, int tagDepth, double busyFactor, double confidenceFloor, double clientCap,
        int clientMinInflight, Duration viewTtl, Duration viewFlushInterval, Duration reservationTtl,
        int costLayers, int costKvHeads, int costHeadDim, int costBytesPerElement, double costPrefillTokensPerS,
        double costFabricBytesPerS, double costUncachedPrefillWeight,
        Duration defaultResidency, Duration maxResidency, double residencyLearningRate, Duration suspectAfter,
        Duration deadAfter, Duration forgetAfter, int queueCap, int maxBlocksPerEngine, Duration engineUpdateInterval,
        int maxEventsPerBatch, int maxHashesPerEvent, int maxBlockSize, int maxStringLength,
        Duration ratiosWindow, Duration ratiosSlidingWindow, Duration ratiosSlide, Duration ratiosJoinBound,
        double usdPerMillionInput, int hotAt, int warmAt, int sketchCapacity,
        int replicasMin, int replicasMax, Duration replicasInterval, int replicasPrefixBlocks,
        double affinityOffBelow, double affinityOnAbove, int affinityMinRequests, double alertStalenessAbove,
        Duration checkpointInterval, String stateBackend, String checkpointDir, Duration bufferTimeout, int parallelism)
        implements Serializable {

    public String topic(String name) {
        return topicPrefix + name;
    }

    public String kvEventsTopic() {
        return topic("kvr.kv-events");
    }

    public String engineLoadTopic() {
        return topic("kvr.engine-load");
    }

    public String deadLetterTopic() {
        return topic("kvr.dead-letter");
    }

    public String viewChangelogTopic() {
        return topic("kvr.view-changelog");
    }

    public String routingDecisionsTopic() {
        return topic("kvr.routing-decisions");
    }

    public String requestOutcomesTopic() {
        return topic("kvr.request-outcomes");
    }

    public String classRatiosTopic() {
        return topic("kvr.class-ratios");
    }

    public String alertsTopic() {
        return topic("kvr.alerts");
    }

    public String replicationRecommendationsTopic() {
        return topic("kvr.replication-recommendations");
    }

    public String engineStateTopic() {
        return topic("kvr.engine-state");
    }

    /** The cost model these options describe. */
    public dev.kvrouter.jobs.policy.CostModel costModel() {
        return new dev.kvrouter.jobs.policy.CostModel(costLayers, costKvHeads, costHeadDim, costBytesPerElement,
                costPrefillTokensPerS, costFabricBytesPerS, usdPerMillionInput);
    }

    /** ln(1 / floor): an entry lives this many residency times. */
    public double lifetimesToFloor() {
        return Math.log(1 / confidenceFloor);
    }

    public static RoutingViewConfig from(Map<String, String> settings) {
        return from(Configuration.fromMap(settings), settings.keySet());
    }

    static RoutingViewConfig from(Configuration c, Set<String> givenKeys) {
        List<String> problems = new ArrayList<>();
        Set<String> known = RoutingViewOptions.all().stream().map(ConfigOption::key).collect(Collectors.toSet());
        givenKeys.stream().filter(k -> !known.contains(k)).sorted()
                .forEach(k -> problems.add("unknown option '" + k + "' (see --help for the options)"));
        Reader r = new Reader(c, problems);
        RoutingViewConfig config = new RoutingViewConfig(
                r.required(KAFKA_BOOTSTRAP), r.required(SCHEMA_REGISTRY_URL), r.required(REDIS_URL), r.get(TOPIC_PREFIX),
                r.get(GROUP_ID), r.oneOf(STARTING_OFFSETS, "latest", "earliest"),
                r.get(VIEW_KEY_PREFIX), r.atLeast(CHUNK_TOKENS, 1), r.atLeast(TAG_DEPTH, 1), r.above(BUSY_FACTOR, 1.0),
                r.between(CONFIDENCE_FLOOR, 0.0, 1.0), r.fraction(CLIENT_CAP), r.atLeast(CLIENT_MIN_INFLIGHT, 1),
                r.atLeast(VIEW_TTL, Duration.ofSeconds(1)), r.atLeast(VIEW_FLUSH_INTERVAL, Duration.ofMillis(1)),
                r.atLeast(RESERVATION_TTL, Duration.ofSeconds(1)),
                r.atLeast(COST_LAYERS, 1), r.atLeast(COST_KV_HEADS, 1), r.atLeast(COST_HEAD_DIM, 1), r.atLeast(COST_BYTES_PER_ELEMENT, 1),
                r.above(COST_PREFILL_TOKENS_PER_S, 0), r.above(COST_FABRIC_BYTES_PER_S, 0),
                r.atLeastDouble(COST_UNCACHED_PREFILL_WEIGHT, 1),
                r.atLeast(DEFAULT_RESIDENCY, Duration.ofSeconds(1)), r.atLeast(MAX_RESIDENCY, Duration.ofSeconds(1)),
                r.fraction(RESIDENCY_LEARNING_RATE), r.atLeast(SUSPECT_AFTER, Duration.ofMillis(100)),
                r.atLeast(DEAD_AFTER, Duration.ofMillis(100)), r.atLeast(FORGET_AFTER, Duration.ZERO),
                r.atLeast(QUEUE_CAP, 1), r.atLeast(MAX_BLOCKS_PER_ENGINE, 1), r.atLeast(ENGINE_UPDATE_INTERVAL, Duration.ZERO),
                r.atLeast(MAX_EVENTS_PER_BATCH, 1), r.atLeast(MAX_HASHES_PER_EVENT, 1), r.atLeast(MAX_BLOCK_SIZE, 1),
                r.atLeast(MAX_STRING_LENGTH, 16),
                r.atLeast(RATIOS_WINDOW, Duration.ofSeconds(1)), r.atLeast(RATIOS_SLIDING_WINDOW, Duration.ofSeconds(1)),
                r.atLeast(RATIOS_SLIDE, Duration.ofSeconds(1)), r.atLeast(RATIOS_JOIN_BOUND, Duration.ofSeconds(1)),
                r.atLeastDouble(RATIOS_USD_PER_MILLION, 0), r.atLeast(RATIOS_HOT_AT, 1), r.atLeast(RATIOS_WARM_AT, 1),
                r.atLeast(RATIOS_SKETCH_CAPACITY, 10),
                r.atLeast(REPLICAS_MIN, 1), r.atLeast(REPLICAS_MAX, 1), r.atLeast(REPLICAS_INTERVAL, Duration.ofSeconds(1)),
                r.atLeast(REPLICAS_PREFIX_BLOCKS, 1),
                r.atLeastDouble(AFFINITY_OFF_BELOW, 0), r.fraction(AFFINITY_ON_ABOVE), r.atLeast(AFFINITY_MIN_REQUESTS, 1),
                r.fraction(ALERT_STALENESS_ABOVE),
                r.atLeast(CHECKPOINT_INTERVAL, Duration.ofMillis(100)), r.oneOf(STATE_BACKEND, "", "hashmap", "rocksdb"),
                r.get(CHECKPOINT_DIR), r.atLeast(BUFFER_TIMEOUT, Duration.ZERO),
                r.atLeast(PARALLELISM, 1));
        if (problems.isEmpty()) {
            if (config.deadAfter().compareTo(config.suspectAfter()) <= 0) {
                problems.add(DEAD_AFTER.key() + " (" + config.deadAfter() + ") must be longer than " + SUSPECT_AFTER.key()
                        + " (" + config.suspectAfter() + ")");
            }
            if (config.viewTtl().compareTo(config.viewFlushInterval().multipliedBy(3)) < 0) {
                problems.add(VIEW_TTL.key() + " (" + config.viewTtl() + ") must be at least 3 times " + VIEW_FLUSH_INTERVAL.key()
                        + " (" + config.viewFlushInterval() + "), or the view blinks out between two writes");
            }
            if (config.maxResidency().compareTo(config.defaultResidency()) < 0) {
                problems.add(MAX_RESIDENCY.key() + " must be at least " + DEFAULT_RESIDENCY.key());
            }
            if (config.hotAt() <= config.warmAt()) {
                problems.add(RATIOS_HOT_AT.key() + " (" + config.hotAt() + ") must be above " + RATIOS_WARM_AT.key()
                        + " (" + config.warmAt() + ")");
            }
            if (config.replicasMax() < config.replicasMin()) {
                problems.add(REPLICAS_MAX.key() + " (" + config.replicasMax() + ") must be at least " + REPLICAS_MIN.key()
                        + " (" + config.replicasMin() + ")");
            }
            if (!(config.affinityOnAbove() > config.affinityOffBelow())) {
                problems.add(AFFINITY_ON_ABOVE.key() + " (" + config.affinityOnAbove() + ") must be above "
                        + AFFINITY_OFF_BELOW.key() + " (" + config.affinityOffBelow() + ")");
            }
            if (config.ratiosSlidingWindow().compareTo(config.ratiosSlide()) < 0) {
                problems.add(RATIOS_SLIDING_WINDOW.key() + " must be at least " + RATIOS_SLIDE.key());
            }
            if (config.viewKeyPrefix().isEmpty() || config.viewKeyPrefix().matches(".*[{}].*")) {
                problems.add(VIEW_KEY_PREFIX.key() + " must be non-empty and free of { }");
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("the kv-router job's configuration has " + problems.size()
                    + " problem(s):\n  - " + String.join("\n  - ", problems));
        }
        return config;
    }

    /** Reads options, adding a problem for each that is missing or malformed instead of stopping. */
    private record Reader(Configuration c, List<String> problems) {
        <T> T get(ConfigOption<T> option) {
            try {
                return c.get(option);
            } catch (IllegalArgumentException e) {
                problems.add(option.key() + ": " + e.getMessage());
                return option.defaultValue();
            }
        }

        String required(ConfigOption<String> option) {
            String v = get(option);
            if (v == null || v.isBlank()) {
                problems.add(option.key() + " is required: " + RoutingViewOptions.describe(option));
            }
            return v;
        }

        String oneOf(ConfigOption<String> option, String... allowed) {
            String v = get(option);
            if (!List.of(allowed).contains(v)) {
                problems.add(option.key() + " must be one of " + String.join(", ", allowed) + ", was '" + v + "'");
            }
            return v;
        }

        int atLeast(ConfigOption<Integer> option, int min) {
            Integer v = get(option);
            if (v == null || v < min) {
                problems.add(option.key() + " must be at least " + min + ", was " + v);
                return min;
            }
            return v;
        }

        Duration atLeast(ConfigOption<Duration> option, Duration min) {
            Duration v = get(option);
            if (v == null || v.compareTo(min) < 0) {
                problems.add(option.key() + " must be at least " + min + ", was " + v);
                return min;
            }
            return v;
        }

        double atLeastDouble(ConfigOption<Double> option, double min) {
            Double v = get(option);
            if (v == null || !(v >= min)) {
                problems.add(option.key() + " must be at least " + min + ", was " + v);
                return min;
            }
            return v;
        }

        double above(ConfigOption<Double> option, double min) {
            Double v = get(option);
            if (v == null || !(v > min)) {
                problems.add(option.key() + " must be above " + min + ", was " + v);
                return min + 1;
            }
            return v;
        }

        /** In (0, 1]. */
        double fraction(ConfigOption<Double> option) {
            Double v = get(option);
            if (v == null || !(v > 0 && v <= 1)) {
                problems.add(option.key() + " must be above 0 and at most 1, was " + v);
                return 1;
            }
            return v;
        }

        double between(ConfigOption<Double> option, double lowExclusive, double highExclusive) {
            Double v = get(option);
            if (v == null || !(v > lowExclusive && v < highExclusive)) {
                problems.add(option.key() + " must be between " + lowExclusive + " and " + highExclusive + ", was " + v);
                return (lowExclusive + highExclusive) / 2;
            }
            return v;
        }
    }
}
