package dev.kvrouter.httpfleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.gateway.NginxGateway;
import dev.kvrouter.sim.engine.EngineConfig;
import dev.kvrouter.sim.workload.SyntheticWorkload;
import dev.kvrouter.stack.LocalNginx;
import dev.kvrouter.stack.LocalRedis;
import dev.kvrouter.stack.Ports;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real nginx (Debian's packages) in front of three simulated engines over HTTP, loaded by the load
 * generator: stock nginx with {@code least_conn}, and the view's gateway with an empty Redis (no view:
 * least connections, said in {@code X-Kvr-Route}: no library loaded). Every request is answered through nginx, the
 * upstream that served it is named, and the engines' cached tokens reach the client.
 */
class NginxInFrontOfEnginesITCase {

    private static final EngineConfig CONFIG = EngineConfig.defaults().withCapacity(8_192).withRates(100_000, 2_000);

    @TempDir
    static Path dir;
    private static final Map<String, HttpEngine> engines = new LinkedHashMap<>();
    private static final Map<String, String> addresses = new LinkedHashMap<>();

    @BeforeAll
    static void startEngines() throws Exception {
        for (int i = 0; i < 3; i++) {
            HttpEngine e = HttpEngine.start("e" + i, CONFIG);
            engines.put(e.id(), e);
            addresses.put(e.id(), "127.0.0.1:" + e.httpPort());
        }
    }

    @AfterAll
    static void stopEngines() {
        engines.values().forEach(HttpEngine::close);
    }

    @Test
    void stockNginxLeastConnServesEveryRequestAndNamesTheEngine() throws Exception {
        int port = Ports.free();
        NginxGateway gateway = NginxGateway.of(port, addresses, "127.0.0.1", 6379, CONFIG.model()).withBalancer(NginxGateway.Balancer.LEAST_CONN);
        Path prefix = dir.resolve("stock");
        try (LocalNginx nginx = LocalNginx.start(prefix, gateway.render(prefix, LocalNginx.modulesDirectory()), port, System.err)) {
            List<LoadGenerator.Result> results = load(port);
            assertThat(results).allSatisfy(r -> assertThat(r.ok()).as("request %d: %d", r.seq(), r.status()).isTrue());
            Set<String> upstreams = results.stream().map(LoadGenerator.Result::upstream).collect(Collectors.toSet());
            assertThat(upstreams).as("least_conn spreads over the engines").hasSizeGreaterThan(1).isSubsetOf(addresses.values());
            assertThat(results).allSatisfy(r -> assertThat(r.cachedTokens()).isBetween(0, r.promptTokens()));
            assertThat(results).allSatisfy(r -> assertThat(r.route()).isEmpty()); // stock nginx says nothing of a route
        }
    }

    @Test
    void theViewsGatewayWithNoViewRoutesByLeastConnectionsAndSaysSo() throws Exception {
        try (LocalRedis redis = LocalRedis.start(dir.resolve("redis"))) {
            int port = Ports.free();
            NginxGateway gateway = NginxGateway.of(port, addresses, "127.0.0.1", redis.port(), CONFIG.model());
            Path prefix = dir.resolve("view");
            try (LocalNginx nginx = LocalNginx.start(prefix, gateway.render(prefix, LocalNginx.modulesDirectory()), port, System.err)) {
                List<LoadGenerator.Result> results = load(port);
                assertThat(results).allSatisfy(r -> {
                    assertThat(r.ok()).as("request %d: %d", r.seq(), r.status()).isTrue();
                    assertThat(r.upstream()).isIn(addresses.values());
                });
                assertThat(results).extracting(LoadGenerator.Result::route).containsOnly("load_only; no_library"); // an empty Redis: no view, no library
            }
        }
    }

    @Test
    void anEngineThatAnswers503IsRetriedOnAnotherAndEveryRequestIsServed() throws Exception {
        // A fourth engine, killed: it answers every completion (a POST) with 503. nginx passes it on
        // (non_idempotent), so the clients see none of them.
        try (HttpEngine dead = HttpEngine.start("e-dead", CONFIG)) {
            dead.fail(dev.kvrouter.sim.engine.Failure.parse("kill:0@0"));
            Map<String, String> withDead = new LinkedHashMap<>(addresses);
            withDead.put(dead.id(), "127.0.0.1:" + dead.httpPort());
            int port = Ports.free();
            NginxGateway gateway = NginxGateway.of(port, withDead, "127.0.0.1", 6379, CONFIG.model()).withBalancer(NginxGateway.Balancer.LEAST_CONN);
            Path prefix = dir.resolve("stock-dead");
            try (LocalNginx nginx = LocalNginx.start(prefix, gateway.render(prefix, LocalNginx.modulesDirectory()), port, System.err)) {
                List<LoadGenerator.Result> results = load(port);
                assertThat(results).allSatisfy(r -> {
                    assertThat(r.ok()).as("request %d: %d", r.seq(), r.status()).isTrue();
                    // $upstream_addr lists the engines tried, the one that answered last.
                    assertThat(r.upstream()).as("answered by a live engine").doesNotEndWith(withDead.get(dead.id()));
                });
            }
        }
    }

    private static List<LoadGenerator.Result> load(int port) throws InterruptedException {
        SyntheticWorkload workload = new SyntheticWorkload("chat", SyntheticWorkload.Settings.defaults(6, 1));
        LoadGenerator generator = new LoadGenerator(new LoadGenerator.Settings(URI.create("http://127.0.0.1:" + port), CONFIG.model(),
                "X-Client-Id", "X-Prefix-Class", 64, Duration.ofSeconds(30)));
        List<LoadGenerator.Result> results = generator.run(workload);
        assertThat(results).isNotEmpty();
        return results;
    }
}
