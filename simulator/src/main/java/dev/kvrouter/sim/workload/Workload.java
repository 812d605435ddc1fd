package dev.kvrouter.sim.workload;

import java.util.Iterator;

/** A stream of requests in non-decreasing arrival order; each call gives a fresh, identical stream. */
public interface Workload {

    String name();

    Iterator<SimRequest> requests();

    /** The median prompt's whole blocks of {@code blockTokens} tokens (0 for no requests): what "caches K prompts deep" is measured in. */
    default int medianPromptBlocks(int blockTokens) {
        int[] blocks = new int[16];
        int n = 0;
        for (Iterator<SimRequest> it = requests(); it.hasNext(); ) {
            if (n == blocks.length) {
                blocks = java.util.Arrays.copyOf(blocks, n * 2);
            }
            blocks[n++] = it.next().promptTokens() / blockTokens;
        }
        if (n == 0) {
            return 0;
        }
        java.util.Arrays.sort(blocks, 0, n);
        return blocks[(n - 1) / 2];
    }
}
