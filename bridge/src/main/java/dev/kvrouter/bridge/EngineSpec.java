package dev.kvrouter.bridge;

import dev.kvrouter.common.ViewIds;
import dev.kvrouter.events.EngineRole;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;

/**
 * One engine the bridge follows: where it publishes KV events (and, optionally, replays them), where
 * its Prometheus metrics are, and how many data-parallel ranks it runs. With data parallelism vLLM
 * binds one publisher per rank on port + rank (events and replay alike); each rank is its own
 * publisher with its own sequence numbers and its own cache.
 *
 * @param topic            ZMQ topic prefix to subscribe to; "" (vLLM's default) takes every message
 * @param dataParallelSize 1 when the engine runs no data parallelism: batches then carry no rank
 * @param kvBlocksCapacity KV blocks per rank when the metrics page does not say (0: read
 *                         {@code vllm:cache_config_info}'s {@code num_gpu_blocks})
 * @param role             the engine's pool under disaggregated serving (PREFILL, DECODE), else BOTH;
 *                         the engine's load reports carry it
 * @param maxRunning       requests a rank runs at once at most (vLLM {@code --max-num-seqs}, SGLang
 *                         {@code --max-running-requests}); 0: unknown, the job learns a lower bound
 */
public record EngineSpec(String id, String model, String events, String replay, String metrics, String topic,
                         int dataParallelSize, long kvBlocksCapacity, EngineRole role, int maxRunning) {

    /** The data-parallel rank as batches and load reports carry it: null without data parallelism. */
    public Integer rank(int index) {
        return dataParallelSize > 1 ? index : null;
    }

    public String eventsEndpoint(int rankIndex) {
        return offsetPort(events, rankIndex);
    }

    public String replayEndpoint(int rankIndex) {
        return replay == null ? null : offsetPort(replay, rankIndex);
    }

    /** The publisher's name in logs and dead letters: the engine id, with /dp&lt;rank&gt; per rank (as the job keys it). */
    public String publisher(int rankIndex) {
        return dataParallelSize > 1 ? id + "/dp" + rankIndex : id;
    }

    /** vLLM's offset_endpoint_port: a tcp endpoint's port plus the rank. */
    static String offsetPort(String endpoint, int offset) {
        if (offset == 0) {
            return endpoint;
        }
        int colon = endpoint.lastIndexOf(':');
        int port = Integer.parseInt(endpoint.substring(colon + 1));
        return endpoint.substring(0, colon + 1) + (port + offset);
    }

    /** Every problem of this entry, each prefixed with {@code where}. */
    List<String> problems(String where) {
        List<String> problems = new ArrayList<>();
        ViewIds.problem(where + "id", id, ViewIds.DEFAULT_MAX_LENGTH).ifPresent(problems::add);
        ViewIds.problem(where + "model", model, ViewIds.DEFAULT_MAX_LENGTH).ifPresent(problems::add);
        if (dataParallelSize < 1 || dataParallelSize > 1024) {
            problems.add(where + "data-parallel-size " + dataParallelSize + " is outside 1..1024");
        }
        endpoint(where + "events", events, true, problems);
        if (replay != null) {
            endpoint(where + "replay", replay, false, problems);
        }
        if (metrics != null) {
            try {
                URI uri = URI.create(metrics);
                if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null) {
                    problems.add(where + "metrics '" + metrics + "' is not an http(s)://host[:port]/path URL");
                }
            } catch (IllegalArgumentException e) {
                problems.add(where + "metrics '" + metrics + "' is not a URL: " + e.getMessage());
            }
        }
        if (kvBlocksCapacity < 0) {
            problems.add(where + "kv-blocks-capacity must not be negative");
        }
        if (maxRunning < 0) {
            problems.add(where + "max-running must not be negative");
        }
        return problems;
    }

    private void endpoint(String name, String value, boolean required, List<String> problems) {
        if (value == null || value.isBlank()) {
            if (required) {
                problems.add(name + " is missing: the engine's ZMQ publisher, e.g. tcp://10.0.0.5:5557");
            }
            return;
        }
        if (value.startsWith("tcp://")) {
            int colon = value.lastIndexOf(':');
            String port = colon > "tcp://".length() ? value.substring(colon + 1) : "";
            if (!port.matches("\\d{1,5}") || Integer.parseInt(port) + dataParallelSize - 1 > 65535) {
                problems.add(name + " '" + value + "' needs a port, e.g. tcp://10.0.0.5:5557 (and port + data-parallel-size - 1 <= 65535)");
            } else if (value.startsWith("tcp://*")) {
                problems.add(name + " '" + value + "' is the engine's bind address; give the host the bridge connects to");
            }
        } else if (value.startsWith("ipc://") || value.startsWith("inproc://")) {
            if (dataParallelSize > 1) {
                problems.add(name + " '" + value + "': only tcp endpoints have a port to offset per data-parallel rank");
            }
        } else {
            problems.add(name + " '" + value + "' is not a ZMQ endpoint (tcp://host:port, ipc://path)");
        }
    }
}
