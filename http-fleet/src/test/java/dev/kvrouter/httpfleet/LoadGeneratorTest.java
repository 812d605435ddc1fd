package dev.kvrouter.httpfleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.sim.engine.EngineConfig;
import dev.kvrouter.sim.workload.SyntheticWorkload;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A workload sent to one engine over HTTP: every request answered, timed, and its cached tokens read from the stream's usage. */
class LoadGeneratorTest {

    @Test
    void aSystemPromptWorkloadToOneEngineIsAnsweredAndFindsItsPromptsCached() throws Exception {
        EngineConfig config = EngineConfig.defaults().withCapacity(8_192).withRates(100_000, 2_000);
        try (HttpEngine engine = HttpEngine.start("e-load", config)) {
            SyntheticWorkload workload = new SyntheticWorkload("system-prompt", SyntheticWorkload.Settings.defaults(4, 1).scaled(0.25));
            LoadGenerator generator = new LoadGenerator(new LoadGenerator.Settings(URI.create("http://127.0.0.1:" + engine.httpPort()),
                    config.model(), "X-Client-Id", "X-Prefix-Class", 64, Duration.ofSeconds(30)));
            List<LoadGenerator.Result> results = generator.run(workload);
            assertThat(results).hasSize(workload.generate().size()).isNotEmpty();
            assertThat(results).allSatisfy(r -> {
                assertThat(r.ok()).as("request %d: status %d", r.seq(), r.status()).isTrue();
                assertThat(r.ttftMs()).isPositive().isLessThanOrEqualTo(r.totalMs());
                assertThat(r.cachedTokens()).isBetween(0, r.promptTokens());
            });
            LoadSummary all = LoadSummary.of(results).get(0);
            assertThat(all.requestClass()).isEqualTo(LoadSummary.ALL);
            assertThat(all.failed()).isZero();
            // Apps' standing system prompts: a request after its app's first finds the prompt cached on the one engine.
            java.util.Map<Long, dev.kvrouter.sim.workload.SimRequest> bySeq = new java.util.HashMap<>();
            workload.generate().forEach(r -> bySeq.put(r.seq(), r));
            java.util.Set<Long> seen = new java.util.HashSet<>();
            int repeats = 0;
            int repeatsCached = 0;
            for (LoadGenerator.Result r : results) {
                long app = bySeq.get(r.seq()).prompt().segments().get(0).seed();
                if (!seen.add(app)) {
                    repeats++;
                    repeatsCached += r.cachedTokens() > 0 ? 1 : 0;
                }
            }
            assertThat(repeats).isPositive();
            assertThat(repeatsCached).as("repeats of an app's prompt that found it cached").isPositive();
            assertThat(all.cachedShare()).isPositive();
            assertThat(all.upstreamGini()).isNaN(); // no balancer named an upstream
        }
    }
}
