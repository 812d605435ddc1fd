package dev.kvrouter.httpfleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.bridge.PrometheusText;
import dev.kvrouter.bridge.VllmGolden;
import dev.kvrouter.sim.engine.EngineConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The engine's /metrics against vLLM's (the bridge's vllm-golden/metrics, see its README): each
 * family the bridge reads has vLLM's # TYPE and label names.
 */
class VllmGoldenMetricsTest {

    /** What EngineLoads reads from a vLLM page. */
    private static final List<String> BRIDGE_READS = List.of("vllm:num_requests_running", "vllm:num_requests_waiting",
            "vllm:kv_cache_usage_perc", "vllm:cache_config_info");

    @Test
    void theFamiliesTheBridgeReadsHaveVllmsTypesAndLabels() throws Exception {
        String golden = VllmGolden.text("metrics/vllm-v1-metrics.txt");
        String ours;
        try (HttpEngine engine = HttpEngine.start("e-golden", EngineConfig.defaults().withCapacity(256))) {
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + engine.httpPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            ours = r.body();
        }

        for (String family : BRIDGE_READS) {
            assertThat(types(ours).get(family)).as("# TYPE of %s", family).isEqualTo(types(golden).get(family));
            if (family.equals("vllm:cache_config_info")) {
                // An info gauge is labelled with every CacheConfig attribute, a set each release changes:
                // ours must be among vLLM's and carry what the bridge reads.
                assertThat(labels(golden, family)).containsAll(labels(ours, family));
                assertThat(labels(ours, family)).contains("engine", "num_gpu_blocks");
            } else {
                assertThat(labels(ours, family)).as("label names of %s", family).isEqualTo(labels(golden, family));
            }
        }
    }

    /** Each family's type, from its {@code # TYPE} line. */
    private static Map<String, String> types(String page) {
        return page.lines().filter(l -> l.startsWith("# TYPE ")).map(l -> l.substring(7).split(" "))
                .collect(Collectors.toMap(p -> p[0], p -> p[1]));
    }

    /** The label names of a family's samples (all of them: each sample must have the same). */
    private static Set<String> labels(String page, String family) {
        Set<String> names = new TreeSet<>();
        PrometheusText.parse(page).stream().filter(s -> s.name().equals(family)).forEach(s -> names.addAll(s.labels().keySet()));
        assertThat(names).as("samples of %s", family).isNotEmpty();
        return names;
    }
}
