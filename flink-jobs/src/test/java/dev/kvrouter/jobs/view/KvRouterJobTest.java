package dev.kvrouter.jobs.view;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.RestartStrategyOptions;
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
}
