package dev.kvrouter.jobs.view;

import static org.assertj.core.api.Assertions.as;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.jobs.config.KvRouterJobConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;

class KvRouterJobTest {

    @Test
    void withoutAWordFromTheClusterTheJobRestartsWithExponentialDelayAndKeepsItsCheckpoints() {
        Configuration conf = new Configuration();
        KvRouterJob.recoveryDefaults(new Configuration(), conf);
        assertThat(conf.get(RestartStrategyOptions.RESTART_STRATEGY)).isEqualTo("exponential-delay");
        assertThat(conf.get(RestartStrategyOptions.RESTART_STRATEGY_EXPONENTIAL_DELAY_MAX_BACKOFF)).isEqualTo(Duration.ofMinutes(1));
        assertThat(conf.get(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION))
                .isEqualTo(ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
    }

    @Test
    void whatTheClusterOrFlinkRunSetsWins() {
        Configuration given = new Configuration();
        given.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        given.set(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION, ExternalizedCheckpointRetention.DELETE_ON_CANCELLATION);
        Configuration conf = new Configuration();
        KvRouterJob.recoveryDefaults(given, conf);
        assertThat(conf.getOptional(RestartStrategyOptions.RESTART_STRATEGY)).isEmpty();
        assertThat(conf.getOptional(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION)).isEmpty();
    }

    @Test
    void everyLocationUpdateReachesTheTableInOneHopFromTheOperatorThatMadeIt() {
        KvRouterJobConfig config = TestConfigs.with();
        StreamExecutionEnvironment env = KvRouterJob.environment(config);
        KvRouterJob.wire(env, config);
        List<String> tasks = new ArrayList<>();
        env.getStreamGraph().getJobGraph().getVertices().forEach(v -> tasks.add(v.getName()));
        // Wrapped where they are made: the wraps run in the engine tracker's and the use confirmer's
        // tasks, and the table's keyBy is the only hop between those and the table.
        assertThat(tasks).as("tasks").filteredOn(t -> t.startsWith("engines")).singleElement(as(InstanceOfAssertFactories.STRING))
                .contains("location updates");
        assertThat(tasks).filteredOn(t -> t.startsWith("confirm cached blocks")).singleElement(as(InstanceOfAssertFactories.STRING))
                .contains("confirmed locations");
        assertThat(tasks).noneMatch(t -> t.startsWith("location updates") || t.startsWith("confirmed locations"));
        assertThat(tasks).filteredOn(t -> t.startsWith("prefix locations")).singleElement(as(InstanceOfAssertFactories.STRING))
                .as("the changelog's writer runs in the table's task").contains("view changelog");
    }
}
