package dev.kvrouter.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.junit.LocalStackExtension;
import dev.kvrouter.stack.junit.UniqueNames;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The dashboard against a real Prometheus: a short demo with {@code --prometheus} (Prometheus from
 * Debian's package scraping the job every second, with the recommended alert rules), and every query
 * of every panel of operations/grafana/kv-router.json returns at least one series.
 */
@ExtendWith(LocalStackExtension.class)
class DemoPrometheusITCase {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void everyPanelOfTheDashboardHasDataFromAShortDemo(StackAddresses stack, @TempDir Path dir) throws Exception {
        DemoCommand demo = new DemoCommand();
        new CommandLine(demo).parseArgs("--duration", "25s", "--engines", "3", "--failures", "", "--out", dir.toString(),
                "--run-id", UniqueNames.topic("demo-prom"), "--prometheus");
        Map<String, Integer> seriesPerQuery = new LinkedHashMap<>();
        List<String> rulesLoaded = new ArrayList<>();
        demo.whilePrometheusRuns = url -> {
            try {
                for (JsonNode panel : dashboard().get("panels")) {
                    for (JsonNode target : panel.get("targets")) {
                        String expr = target.get("expr").asText();
                        seriesPerQuery.put(panel.get("title").asText() + ": " + expr, query(url, expr).size());
                    }
                }
                for (JsonNode group : get(url + "/api/v1/rules").at("/data/groups")) {
                    group.get("rules").forEach(r -> rulesLoaded.add(r.get("name").asText()));
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
        PrintStream stdout = System.out;
        int exit;
        System.setOut(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        try {
            exit = demo.run(stack, dir);
        } finally {
            System.setOut(stdout);
        }
        assertThat(exit).isZero();
        assertThat(seriesPerQuery).as("queries asked").hasSizeGreaterThan(15);
        assertThat(seriesPerQuery).as("panel queries that returned no series").allSatisfy((query, series) -> assertThat(series)
                .as(query).isPositive());
        assertThat(rulesLoaded).as("the recommended alert rules, loaded").contains("KvRouterViewStale", "KvRouterDeadLetters",
                "KvRouterEnginesUnsynced", "KvRouterAffinityNotPaying");
    }

    private static JsonNode dashboard() throws Exception {
        try (InputStream in = DemoCommand.class.getResourceAsStream("/operations/grafana/kv-router.json")) {
            return JSON.readTree(in);
        }
    }

    /** An instant query's result vector. */
    private static JsonNode query(String url, String expr) throws Exception {
        JsonNode answer = get(url + "/api/v1/query?query=" + URLEncoder.encode(expr, StandardCharsets.UTF_8));
        assertThat(answer.get("status").asText()).as(expr + ": " + answer).isEqualTo("success");
        return answer.at("/data/result");
    }

    private static JsonNode get(String url) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(response.body());
    }
}
