package dev.kvrouter.bridge;

import dev.kvrouter.bridge.PrometheusText.Sample;
import dev.kvrouter.events.EngineLifecycle;
import dev.kvrouter.events.EngineLoad;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns an engine's Prometheus page into {@link EngineLoad} reports, one per data-parallel rank.
 *
 * <p>Metric names, first found wins: waiting = {@code vllm:num_requests_waiting} (SGLang:
 * {@code sglang:num_queue_reqs}); running = {@code vllm:num_requests_running}
 * ({@code sglang:num_running_reqs}); KV usage (a fraction 0..1) = {@code vllm:kv_cache_usage_perc},
 * before vLLM 0.10 {@code vllm:gpu_cache_usage_perc} ({@code sglang:token_usage}); KV capacity in
 * blocks = the engine's {@code kv-blocks-capacity} setting, else the {@code num_gpu_blocks} label of
 * {@code vllm:cache_config_info}, else unknown (0: the report then carries no usage).
 *
 * <p>Labels: vLLM labels each series with {@code model_name} and {@code engine} (the data-parallel
 * engine index). Series are grouped by {@code engine}. A rank's report takes its own group; without
 * data parallelism, or when the page has no group for a rank, the report sums every group (waiting,
 * running, used and total blocks), which can only overstate a rank's load, never hide it.
 */
public final class EngineLoads {

    static final List<String> WAITING = List.of("vllm:num_requests_waiting", "sglang:num_queue_reqs");
    static final List<String> RUNNING = List.of("vllm:num_requests_running", "sglang:num_running_reqs");
    static final List<String> KV_USAGE = List.of("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage");
    static final String CACHE_CONFIG_INFO = "vllm:cache_config_info";
    static final String ENGINE_LABEL = "engine";

    private EngineLoads() {}

    /** One group's figures. */
    record Figures(double waiting, double running, long kvUsed, long kvCapacity) {
        Figures plus(Figures o) {
            return new Figures(waiting + o.waiting, running + o.running, kvUsed + o.kvUsed, kvCapacity + o.kvCapacity);
        }
    }

    /**
     * The reports for every rank of {@code spec}.
     *
     * @throws IllegalArgumentException when the page lacks the waiting or running gauge (not an engine's page)
     */
    public static List<EngineLoad> reports(EngineSpec spec, List<Sample> samples, long tsMs, int heartbeatIntervalMs) {
        String waiting = family(samples, WAITING);
        String running = family(samples, RUNNING);
        if (waiting == null || running == null) {
            throw new IllegalArgumentException("the metrics page has none of " + (waiting == null ? WAITING : RUNNING)
                    + ": is it a vLLM or SGLang /metrics?");
        }
        String usage = family(samples, KV_USAGE);
        Map<String, Figures> groups = new LinkedHashMap<>();
        for (String group : groups(samples)) {
            groups.put(group, figures(spec, samples, group, waiting, running, usage));
        }
        Figures total = groups.values().stream().reduce(Figures::plus).orElse(new Figures(0, 0, 0, 0));
        List<EngineLoad> reports = new ArrayList<>(spec.dataParallelSize());
        for (int r = 0; r < spec.dataParallelSize(); r++) {
            Figures f = spec.dataParallelSize() > 1 ? groups.getOrDefault(String.valueOf(r), total) : total;
            reports.add(EngineLoad.newBuilder().setEngineId(spec.id()).setModel(spec.model()).setDataParallelRank(spec.rank(r))
                    .setTsMs(tsMs).setWaiting(saturatedInt(f.waiting())).setRunning(saturatedInt(f.running()))
                    .setKvBlocksUsed(f.kvUsed()).setKvBlocksCapacity(f.kvCapacity())
                    // The page answered: the engine is serving. vLLM exposes no draining state.
                    .setLifecycle(EngineLifecycle.READY).setHeartbeatIntervalMs(heartbeatIntervalMs).setRole(spec.role())
                    .setMaxRunning(spec.maxRunning()).build());
        }
        return reports;
    }

    private static Figures figures(EngineSpec spec, List<Sample> samples, String group, String waiting, String running, String usage) {
        double w = 0;
        double r = 0;
        double used = Double.NaN;
        long capacity = spec.kvBlocksCapacity();
        long pageCapacity = 0;
        for (Sample s : samples) {
            boolean inGroup = group.equals(s.labels().getOrDefault(ENGINE_LABEL, ""));
            if (s.name().equals(CACHE_CONFIG_INFO) && s.label("num_gpu_blocks") != null) {
                long blocks = parseLong(s.label("num_gpu_blocks"));
                if (inGroup || pageCapacity == 0) {
                    pageCapacity = blocks;
                }
            }
            if (!inGroup || !Double.isFinite(s.value())) {
                continue;
            }
            if (s.name().equals(waiting)) {
                w += s.value();
            } else if (s.name().equals(running)) {
                r += s.value();
            } else if (s.name().equals(usage)) {
                // One gauge per group; should there be several (e.g. per model), the fullest counts.
                used = Double.isNaN(used) ? s.value() : Math.max(used, s.value());
            }
        }
        if (capacity == 0) {
            capacity = pageCapacity;
        }
        double fraction = Double.isNaN(used) ? 0 : Math.min(1, Math.max(0, used));
        return new Figures(Math.max(0, w), Math.max(0, r), Math.round(fraction * capacity), capacity);
    }

    /** The first of {@code names} the page has. */
    private static String family(List<Sample> samples, List<String> names) {
        for (String name : names) {
            for (Sample s : samples) {
                if (s.name().equals(name)) {
                    return name;
                }
            }
        }
        return null;
    }

    /** The distinct values of the engine label among the load gauges ("" for series without it). */
    private static List<String> groups(List<Sample> samples) {
        List<String> groups = new ArrayList<>();
        for (Sample s : samples) {
            if (WAITING.contains(s.name()) || RUNNING.contains(s.name())) {
                String g = s.labels().getOrDefault(ENGINE_LABEL, "");
                if (!groups.contains(g)) {
                    groups.add(g);
                }
            }
        }
        return groups;
    }

    private static long parseLong(String s) {
        try {
            return Math.max(0, Long.parseLong(s.trim()));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static int saturatedInt(double v) {
        return (int) Math.min(Integer.MAX_VALUE, Math.round(v));
    }
}
