package dev.kvrouter.jobs.ratios;

import dev.kvrouter.metrics.ClassRatios;
import dev.kvrouter.metrics.WindowKind;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** Stamps a window's ratios with their class, kind and bounds. */
public final class ClassWindow extends ProcessWindowFunction<ClassRatios, ClassRatios, String, TimeWindow> {

    private final WindowKind kind;

    public ClassWindow(WindowKind kind) {
        this.kind = kind;
    }

    @Override
    public void process(String prefixClass, Context ctx, Iterable<ClassRatios> results, Collector<ClassRatios> out) {
        for (ClassRatios r : results) {
            r.setPrefixClass(prefixClass);
            r.setWindowKind(kind);
            r.setWindowStartMs(ctx.window().getStart());
            r.setWindowEndMs(ctx.window().getEnd());
            out.collect(r);
        }
    }
}
