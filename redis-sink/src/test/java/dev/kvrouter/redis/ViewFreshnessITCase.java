package dev.kvrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.stack.LocalRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.nio.file.Path;
import java.util.concurrent.ScheduledFuture;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.metrics.groups.InternalSinkWriterMetricGroup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The view's {@code updated_ms} says when data last flowed, not when the sink last flushed: an
 * engine's report stamps it; a flush with no report (the job's input stalled), or with only writes
 * the job makes on its own clock (expiries), leaves it, so the view ages and balancers stop trusting
 * it, while its keys' TTLs are still refreshed and the entries stay for when input returns.
 */
class ViewFreshnessITCase {

    @TempDir
    Path dir;

    @Test
    void onlyAnEnginesReportStampsTheViewsFreshnessAndEveryFlushKeepsItsKeys() throws Exception {
        try (LocalRedis redis = LocalRedis.start(dir.resolve("redis"));
             RedisClient client = RedisClient.create(redis.url());
             StatefulRedisConnection<String, String> connection = client.connect()) {
            var r = connection.sync();
            RedisViewSinkOptions options = RedisViewSinkOptions.defaults(redis.url());
            ViewLayout layout = new ViewLayout(options.keyPrefix());
            RedisViewWriter writer = new RedisViewWriter(options, new NeverFiring(),
                    InternalSinkWriterMetricGroup.wrap(UnregisteredMetricsGroup.createOperatorMetricGroup()));
            try {
                writer.flush(false);
                assertThat(r.hget(layout.metaKey(), "updated_ms")).as("nothing flowed yet: no freshness").isNull();
                assertThat(r.hget(layout.metaKey(), "layout")).isNotNull();

                writer.write(ViewWrite.engine("e1", new EngineEntry("READY", 0, 1, 0, 600_000, 1, false, 0), 1), null);
                writer.flush(false);
                String stamped = r.hget(layout.metaKey(), "updated_ms");
                assertThat(stamped).isNotNull();

                Thread.sleep(20);
                writer.write(ViewWrite.block(7, 42, null, 0, System.currentTimeMillis()), null); // an expiry, on the job's clock
                writer.flush(false);
                writer.flush(false);
                assertThat(r.hget(layout.metaKey(), "updated_ms")).as("no report since: the view ages").isEqualTo(stamped);
                assertThat(r.pttl(layout.metaKey())).as("its keys are kept meanwhile").isPositive();
                assertThat(r.pttl(layout.enginesKey())).isPositive();

                writer.write(ViewWrite.engine("e1", new EngineEntry("READY", 0, 2, 0, 600_000, 1, false, 0), 1), null);
                writer.flush(false);
                assertThat(Long.parseLong(r.hget(layout.metaKey(), "updated_ms"))).isGreaterThan(Long.parseLong(stamped));
            } finally {
                writer.close();
            }
        }
    }

    /** Timers that never fire: the test flushes by hand. */
    private static final class NeverFiring implements ProcessingTimeService {
        @Override
        public long getCurrentProcessingTime() {
            return System.currentTimeMillis();
        }

        @Override
        public ScheduledFuture<?> registerTimer(long timestamp, ProcessingTimeCallback target) {
            return null;
        }
    }
}
