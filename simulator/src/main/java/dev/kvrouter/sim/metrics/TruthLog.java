package dev.kvrouter.sim.metrics;

import dev.kvrouter.events.RouteReason;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Each placement beside the truth a policy could not see: the blocks of the prompt its chosen engine
 * and the best engine of the fleet actually held when it was placed ({@code --truth-log}). It tells
 * a view that missed a holder (COLD while an engine held the prompt) from traffic that was truly
 * cold, and a holder given up from one never seen. A measurement of the simulator, one CSV line a
 * placement, flushed at close.
 */
public final class TruthLog implements AutoCloseable {

    public static final String HEADER = "policy,request_id,at_ms,reason,engine,predicted_blocks,best_holder_blocks,cached_on_chosen,"
            + "true_best_blocks,true_best_engine,prompt_blocks";

    private final BufferedWriter out;

    private TruthLog(BufferedWriter out) {
        this.out = out;
    }

    public static TruthLog open(Path file) {
        try {
            if (file.getParent() != null) {
                Files.createDirectories(file.getParent());
            }
            BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
            out.write(HEADER);
            out.newLine();
            return new TruthLog(out);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the truth log " + file, e);
        }
    }

    public synchronized void placed(String policy, String requestId, double atMs, RouteReason reason, String engine, int predictedBlocks,
                                    int bestHolderBlocks, int cachedOnChosen, int trueBestBlocks, String trueBestEngine, int promptBlocks) {
        try {
            out.write(policy + "," + requestId + "," + Math.round(atMs) + "," + reason + "," + engine + "," + predictedBlocks + ","
                    + bestHolderBlocks + "," + cachedOnChosen + "," + trueBestBlocks + "," + trueBestEngine + "," + promptBlocks);
            out.newLine();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public synchronized void close() {
        try {
            out.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
