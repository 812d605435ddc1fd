package dev.kvrouter.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.bridge.PrometheusText.Sample;
import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.EngineRole;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The bridge's reading of a /metrics page as vLLM's PrometheusStatLogger writes it (vllm-golden/metrics). */
class VllmGoldenMetricsTest {

    private static final String PAGE = VllmGolden.text("metrics/vllm-v1-metrics.txt");

    @Test
    void theGoldenPageReadsAsTheLoadItShows() {
        EngineSpec spec = new EngineSpec("vllm-a", "Qwen/Qwen2.5-7B-Instruct", "tcp://127.0.0.1:5557", null,
                "http://127.0.0.1:8000/metrics", "", 1, 0, EngineRole.BOTH, 0);

        List<EngineLoad> loads = EngineLoads.reports(spec, PrometheusText.parse(PAGE), 0, 1_000);

        // 3 running, 7 waiting, a quarter of cache_config_info's 2000 blocks in use.
        assertThat(loads).singleElement().satisfies(l -> {
            assertThat(l.getRunning()).isEqualTo(3);
            assertThat(l.getWaiting()).isEqualTo(7);
            assertThat(l.getKvBlocksCapacity()).isEqualTo(2000);
            assertThat(l.getKvBlocksUsed()).isEqualTo(500);
        });
    }

    @Test
    void everySampleLineOfThePageParses() {
        List<Sample> samples = PrometheusText.parse(PAGE);

        long lines = PAGE.lines().filter(l -> !l.isBlank() && !l.startsWith("#")).count();
        assertThat(samples).hasSize((int) lines);
        assertThat(samples).filteredOn(s -> s.name().equals("vllm:time_to_first_token_seconds_bucket"))
                .extracting(s -> s.label("le")).endsWith("+Inf");
        assertThat(samples).filteredOn(s -> s.name().equals("vllm:prefix_cache_hits_total"))
                .singleElement().satisfies(s -> assertThat(s.value()).isEqualTo(30720.0));
    }
}
