package dev.kvrouter.jobs.view.functions;

import dev.kvrouter.jobs.view.model.ViewResync;
import dev.kvrouter.redis.RedisViewSinkOptions;
import dev.kvrouter.redis.ViewLossDetector;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.util.Collector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The job's look at the view's Redis, once per tick: when Redis lost the view (restarted empty,
 * failed over, flushed), and once when the job starts, it asks every instance of the
 * prefix-location table to write its blocks again ({@link ViewResync}, broadcast). It reloads a
 * missing function library itself ({@link ViewLossDetector}). One instance (parallelism 1): one
 * look, broadcast to all. The rest of the view needs no resync: engine entries come back with the
 * next load report, meta with the sink's next flush.
 */
public final class ViewLossProbe extends RichFlatMapFunction<Long, ViewResync> {

    private static final Logger LOG = LoggerFactory.getLogger(ViewLossProbe.class);

    private final RedisViewSinkOptions options;
    private transient ViewLossDetector detector;

    public ViewLossProbe(RedisViewSinkOptions options) {
        this.options = options;
    }

    @Override
    public void open(OpenContext openContext) {
        detector = new ViewLossDetector(options);
        // Reservations live in Redis, not in the job: the probe reads their count on each look.
        getRuntimeContext().getMetricGroup().gauge("kvr_view_reservations", () -> detector.reservations());
    }

    @Override
    public void flatMap(Long tick, Collector<ViewResync> out) {
        detector.check().ifPresent(why -> {
            LOG.info("writing the view again from state: {}", why);
            out.collect(ViewResync.of(why, System.currentTimeMillis()));
        });
    }

    @Override
    public void close() {
        if (detector != null) {
            detector.close();
        }
    }
}
