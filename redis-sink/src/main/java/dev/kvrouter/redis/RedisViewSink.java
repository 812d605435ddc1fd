package dev.kvrouter.redis;

import java.io.IOException;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;

/**
 * Writes the routing view to Redis: coalesced, batched, pipelined, every key with an expiry, and
 * the view's freshness stamp refreshed while the job runs. At-least-once: a checkpoint completes
 * only after every write before it was acknowledged; writes are full values, so a replay is
 * harmless.
 */
public final class RedisViewSink implements Sink<ViewWrite> {

    private static final long serialVersionUID = 1L;

    private final RedisViewSinkOptions options;

    public RedisViewSink(RedisViewSinkOptions options) {
        var problems = options.problems();
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("invalid Redis view sink options:\n  - " + String.join("\n  - ", problems));
        }
        this.options = options;
    }

    @Override
    public SinkWriter<ViewWrite> createWriter(WriterInitContext context) throws IOException {
        return new RedisViewWriter(options, context.getProcessingTimeService(), context.metricGroup());
    }
}
