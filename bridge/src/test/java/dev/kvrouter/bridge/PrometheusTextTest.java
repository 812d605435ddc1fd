package dev.kvrouter.bridge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvrouter.bridge.PrometheusText.Sample;
import dev.kvrouter.events.EngineLifecycle;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.EngineRole;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The exposition-format parser and the load reports made from vLLM's (and SGLang's) pages. */
class PrometheusTextTest {

    /** As vLLM 0.10 serves it (abridged): HELP/TYPE lines, labels, histograms, the cache config info gauge. */
    static final String VLLM_PAGE = """
            # HELP vllm:num_requests_running Number of requests in model execution batches.
            # TYPE vllm:num_requests_running gauge
            vllm:num_requests_running{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 3.0
            # HELP vllm:num_requests_waiting Number of requests waiting to be processed.
            # TYPE vllm:num_requests_waiting gauge
            vllm:num_requests_waiting{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 7.0
            # HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
            # TYPE vllm:kv_cache_usage_perc gauge
            vllm:kv_cache_usage_perc{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.25
            # HELP vllm:cache_config_info Information of the LLMEngine CacheConfig
            # TYPE vllm:cache_config_info gauge
            vllm:cache_config_info{block_size="16",cache_dtype="auto",engine="0",num_gpu_blocks="2000",prefix_caching_hash_algo="sha256"} 1.0
            # HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
            # TYPE vllm:time_to_first_token_seconds histogram
            vllm:time_to_first_token_seconds_bucket{engine="0",le="0.001",model_name="m"} 0.0
            vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="m"} 12.0
            vllm:time_to_first_token_seconds_sum{engine="0",model_name="m"} 1.5e+00
            """;

    /** An older vLLM: gpu_cache_usage_perc, no engine label, a timestamp on one line, odd label text. */
    static final String OLD_VLLM_PAGE = """
            # HELP vllm:num_requests_running Number of requests currently running on GPU.
            # TYPE vllm:num_requests_running gauge
            vllm:num_requests_running{model_name="m"} 2.0 1700000000000
            # TYPE vllm:num_requests_waiting gauge
            vllm:num_requests_waiting{model_name="m"} 0.0
            # TYPE vllm:gpu_cache_usage_perc gauge
            vllm:gpu_cache_usage_perc{model_name="m"} 0.5
            process_note{text="a \\"quoted\\", {braced} value\\\\"} NaN
            """;

    private static final EngineSpec ENGINE = new EngineSpec("vllm-a", "m", "tcp://127.0.0.1:5557", null, "http://127.0.0.1:8000/metrics", "", 1, 0, EngineRole.BOTH, 0);

    @Test
    void parsesSamplesWithLabelsAndSkipsComments() {
        List<Sample> samples = PrometheusText.parse(VLLM_PAGE);
        assertThat(samples).hasSize(7);
        assertThat(samples.get(0)).isEqualTo(new Sample("vllm:num_requests_running",
                Map.of("engine", "0", "model_name", "meta-llama/Llama-3.1-8B-Instruct"), 3.0));
        assertThat(samples.get(5).label("le")).isEqualTo("+Inf");
        assertThat(samples.get(6).value()).isEqualTo(1.5);

        List<Sample> old = PrometheusText.parse(OLD_VLLM_PAGE);
        assertThat(old.get(0).value()).isEqualTo(2.0); // the timestamp is not the value
        assertThat(old.get(3).label("text")).isEqualTo("a \"quoted\", {braced} value\\");
        assertThat(old.get(3).value()).isNaN();
    }

    @Test
    void malformedLinesAreReportedWithTheirLineNumber() {
        assertThatThrownBy(() -> PrometheusText.parse("# ok\nvllm:x{engine=\"0\" 1\n")).hasMessageContaining("metrics line 2");
        assertThatThrownBy(() -> PrometheusText.parse("vllm:x{engine=\"0\"} many\n")).hasMessageContaining("'many' is not a number");
    }

    @Test
    void aVllmPageBecomesOneLoadReportWithBlocksFromTheCacheConfig() {
        List<EngineLoad> reports = EngineLoads.reports(ENGINE, PrometheusText.parse(VLLM_PAGE), 1234, 1000);
        assertThat(reports).containsExactly(EngineLoad.newBuilder().setEngineId("vllm-a").setModel("m").setDataParallelRank(null)
                .setTsMs(1234).setWaiting(7).setRunning(3).setKvBlocksUsed(500).setKvBlocksCapacity(2000)
                .setLifecycle(EngineLifecycle.READY).setHeartbeatIntervalMs(1000).build());
    }

    @Test
    void theOlderGaugeNameCountsAndAConfiguredCapacityStandsInForTheMissingCacheConfig() {
        EngineSpec withCapacity = new EngineSpec("vllm-old", "m", "tcp://127.0.0.1:5557", null, "http://h/metrics", "", 1, 800, EngineRole.BOTH, 64);
        EngineLoad load = EngineLoads.reports(withCapacity, PrometheusText.parse(OLD_VLLM_PAGE), 1, 1000).get(0);
        assertThat(load.getRunning()).isEqualTo(2);
        assertThat(load.getWaiting()).isZero();
        assertThat(load.getKvBlocksUsed()).isEqualTo(400);
        assertThat(load.getKvBlocksCapacity()).isEqualTo(800);
        assertThat(load.getMaxRunning()).as("the engines file's max-running: the engine's slots").isEqualTo(64);

        EngineLoad unknown = EngineLoads.reports(ENGINE, PrometheusText.parse(OLD_VLLM_PAGE), 1, 1000).get(0);
        assertThat(unknown.getKvBlocksCapacity()).as("no capacity anywhere: unknown, as the schema says").isZero();
        assertThat(unknown.getKvBlocksUsed()).isZero();
    }

    @Test
    void dataParallelRanksTakeTheirOwnEngineLabelledSeries() {
        String page = """
                vllm:num_requests_waiting{engine="0",model_name="m"} 1
                vllm:num_requests_waiting{engine="1",model_name="m"} 4
                vllm:num_requests_running{engine="0",model_name="m"} 2
                vllm:num_requests_running{engine="1",model_name="m"} 8
                vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.1
                vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.9
                vllm:cache_config_info{engine="0",num_gpu_blocks="1000"} 1
                vllm:cache_config_info{engine="1",num_gpu_blocks="1000"} 1
                """;
        EngineSpec dp3 = new EngineSpec("vllm-dp", "m", "tcp://127.0.0.1:5557", null, "http://h/metrics", "", 3, 0, EngineRole.PREFILL, 0);
        List<EngineLoad> reports = EngineLoads.reports(dp3, PrometheusText.parse(page), 1, 1000);
        assertThat(reports).extracting(EngineLoad::getDataParallelRank).containsExactly(0, 1, 2);
        assertThat(reports).extracting(EngineLoad::getWaiting).containsExactly(1, 4, 5); // rank 2 has no series: the total
        assertThat(reports).extracting(EngineLoad::getKvBlocksUsed).containsExactly(100L, 900L, 1000L);
        assertThat(reports).extracting(EngineLoad::getKvBlocksCapacity).containsExactly(1000L, 1000L, 2000L);
        assertThat(reports).extracting(EngineLoad::getRole).containsOnly(EngineRole.PREFILL);
    }

    @Test
    void sglangNamesAreUnderstoodAndAPageWithoutLoadGaugesIsAnError() {
        String sglang = """
                # TYPE sglang:num_running_reqs gauge
                sglang:num_running_reqs{model_name="m"} 5.0
                sglang:num_queue_reqs{model_name="m"} 6.0
                sglang:token_usage{model_name="m"} 0.3
                """;
        EngineSpec spec = new EngineSpec("sgl", "m", "tcp://127.0.0.1:5557", null, "http://h/metrics", "", 1, 100, EngineRole.BOTH, 0);
        EngineLoad load = EngineLoads.reports(spec, PrometheusText.parse(sglang), 1, 1000).get(0);
        assertThat(load.getRunning()).isEqualTo(5);
        assertThat(load.getWaiting()).isEqualTo(6);
        assertThat(load.getKvBlocksUsed()).isEqualTo(30);

        assertThatThrownBy(() -> EngineLoads.reports(spec, PrometheusText.parse("up 1\n"), 1, 1000))
                .hasMessageContaining("vllm:num_requests_waiting");
    }
}
