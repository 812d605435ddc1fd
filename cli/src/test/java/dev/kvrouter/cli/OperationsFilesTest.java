package dev.kvrouter.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The operations files (operations/: the Grafana dashboard, the Prometheus scrape config and alert
 * rules) name only metrics the README documents, the ones the metrics ITCases scrape from the real
 * job, bridge and client: a renamed metric fails here instead of leaving an empty panel or a rule that
 * never fires.
 */
class OperationsFilesTest {

    private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
    private static final Path OPERATIONS = ROOT.resolve("operations");
    /** A metric name in PromQL: ours, Flink's own, or Prometheus' ALERTS. */
    private static final Pattern METRIC = Pattern.compile("\\b(flink_[a-zA-Z0-9_]+|kvr_[a-zA-Z0-9_]+|ALERTS)\\b");
    /** Flink's scope for an operator's metrics, which the README leaves out. */
    private static final String OPERATOR = "flink_taskmanager_job_task_operator_";
    /** The suffixes Prometheus adds to a summary's or a histogram's series. */
    private static final List<String> SERIES_SUFFIXES = List.of("_count", "_sum", "_bucket");

    @Test
    void everyPanelOfTheDashboardQueriesOnlyDocumentedMetrics() throws Exception {
        JsonNode dashboard = new ObjectMapper().readTree(OPERATIONS.resolve("grafana/kv-router.json").toFile());
        List<String> titles = new ArrayList<>();
        List<String> expressions = new ArrayList<>();
        for (JsonNode panel : dashboard.get("panels")) {
            titles.add(panel.get("title").asText());
            assertThat(panel.get("targets")).as(panel.get("title").asText()).isNotEmpty();
            panel.get("targets").forEach(t -> expressions.add(t.get("expr").asText()));
        }
        assertThat(String.join(" | ", titles)).as("the panels the issue asks for").contains("Affinity hit rate per class",
                "Recompute avoided per hit", "Load Gini", "staleness", "freshness", "Ingest", "Pick reasons", "Engines by health",
                "Alerts", "Checkpoints");
        assertThat(undocumented(expressions)).as("metrics the dashboard queries that the README does not list").isEmpty();
    }

    @Test
    void everyAlertRuleWatchesADocumentedMetricAndThePrometheusConfigLoadsTheRules() throws Exception {
        ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
        JsonNode rules = yaml.readTree(OPERATIONS.resolve("prometheus/kv-router-alerts.yml").toFile());
        List<String> alerts = new ArrayList<>();
        List<String> expressions = new ArrayList<>();
        for (JsonNode group : rules.get("groups")) {
            for (JsonNode rule : group.get("rules")) {
                alerts.add(rule.get("alert").asText());
                expressions.add(rule.get("expr").asText());
                assertThat(rule.at("/annotations/summary").asText()).as(rule.get("alert").asText()).isNotBlank();
            }
        }
        assertThat(alerts).as("freshness, dead letters, unsynced engines, AFFINITY_NOT_PAYING")
                .contains("KvRouterViewStale", "KvRouterDeadLetters", "KvRouterEnginesUnsynced", "KvRouterAffinityNotPaying");
        assertThat(undocumented(expressions)).as("metrics the alert rules watch that the README does not list").isEmpty();
        JsonNode config = yaml.readTree(OPERATIONS.resolve("prometheus/prometheus.yml").toFile());
        assertThat(config.get("rule_files").get(0).asText()).isEqualTo("kv-router-alerts.yml");
        assertThat(config.get("scrape_configs")).hasSizeGreaterThanOrEqualTo(3);
    }

    /** The metric names in these expressions the README's metric tables do not name. */
    private static Set<String> undocumented(List<String> expressions) throws Exception {
        String readme = Files.readString(ROOT.resolve("README.md"));
        Set<String> missing = new TreeSet<>();
        for (String expr : expressions) {
            Matcher m = METRIC.matcher(expr);
            while (m.find()) {
                String name = m.group(1);
                if (!name.equals("ALERTS") && !Pattern.compile("`" + Pattern.quote(documentedName(name)) + "[`{]").matcher(readme).find()) {
                    missing.add(name);
                }
            }
        }
        return missing;
    }

    /**
     * How the README writes a scraped name: without a summary's or histogram's series suffix, and an
     * operator's metric after the operator prefix (with its label group, e.g. {@code class_kvr_load_gini}).
     */
    private static String documentedName(String name) {
        String n = name;
        for (String suffix : SERIES_SUFFIXES) {
            if (n.endsWith(suffix)) {
                n = n.substring(0, n.length() - suffix.length());
            }
        }
        return n.startsWith(OPERATOR) ? n.substring(OPERATOR.length()) : n;
    }
}
