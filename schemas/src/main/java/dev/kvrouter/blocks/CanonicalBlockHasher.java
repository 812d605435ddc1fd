package dev.kvrouter.blocks;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The canonical block hash: the one block identity shared by the pipeline and every balancer,
 * independent of any engine's own (randomly seeded) hashes. Specified in
 * {@code docs/canonical-block-hash.md}, with test vectors; this class is the reference.
 *
 * <pre>
 * root      = XXH64(utf8("kvr-block-v1") 0x00 utf8(model) 0x00 utf8(lora_name or ""), seed 0)
 * chunk k   = XXH64(le64(parent) le32(t_0) ... le32(t_{C-1}) [le32(n) (le32(len) utf8(key))*n], seed 0)
 *             parent of chunk 0 is root; the bracket is present only when there are extra keys
 * </pre>
 * Only full chunks of {@code chunkTokens} tokens have a hash; engines cache only full blocks too.
 */
public final class CanonicalBlockHasher {

    public static final String VERSION_TAG = "kvr-block-v1";

    private final int chunkTokens;

    public CanonicalBlockHasher(int chunkTokens) {
        if (chunkTokens < 1) {
            throw new IllegalArgumentException("chunk size must be at least 1 token, was " + chunkTokens);
        }
        this.chunkTokens = chunkTokens;
    }

    public int chunkTokens() {
        return chunkTokens;
    }

    /** The parent of the first chunk: separates models and LoRA adapters, whose KV never matches. */
    public long root(String model, String loraName) {
        byte[] text = (VERSION_TAG + '\0' + model + '\0' + (loraName == null ? "" : loraName)).getBytes(StandardCharsets.UTF_8);
        return XxHash64.hash(text, 0, text.length, 0);
    }

    /** The hash of one full chunk {@code tokens[from, from + chunkTokens)} following {@code parent}. */
    public long next(long parent, int[] tokens, int from, List<String> extraKeys) {
        if (from < 0 || from + chunkTokens > tokens.length) {
            throw new IllegalArgumentException("a chunk needs " + chunkTokens + " tokens from " + from + ", have " + tokens.length);
        }
        byte[][] extras = null;
        int size = 8 + 4 * chunkTokens;
        if (extraKeys != null && !extraKeys.isEmpty()) {
            extras = new byte[extraKeys.size()][];
            size += 4;
            for (int i = 0; i < extras.length; i++) {
                extras[i] = extraKeys.get(i).getBytes(StandardCharsets.UTF_8);
                size += 4 + extras[i].length;
            }
        }
        byte[] buf = new byte[size];
        int p = putLong(buf, 0, parent);
        for (int i = 0; i < chunkTokens; i++) {
            p = putInt(buf, p, tokens[from + i]);
        }
        if (extras != null) {
            p = putInt(buf, p, extras.length);
            for (byte[] e : extras) {
                p = putInt(buf, p, e.length);
                System.arraycopy(e, 0, buf, p, e.length);
                p += e.length;
            }
        }
        return XxHash64.hash(buf, 0, size, 0);
    }

    /** The hashes of every full chunk of a prompt, first to last: what a balancer looks up. */
    public long[] chain(String model, String loraName, int[] tokens, List<String> extraKeys) {
        long[] hashes = new long[tokens.length / chunkTokens];
        long parent = root(model, loraName);
        for (int k = 0; k < hashes.length; k++) {
            parent = next(parent, tokens, k * chunkTokens, extraKeys);
            hashes[k] = parent;
        }
        return hashes;
    }

    private static int putLong(byte[] b, int p, long v) {
        for (int i = 0; i < 8; i++) {
            b[p + i] = (byte) (v >>> (8 * i));
        }
        return p + 8;
    }

    private static int putInt(byte[] b, int p, int v) {
        b[p] = (byte) v;
        b[p + 1] = (byte) (v >>> 8);
        b[p + 2] = (byte) (v >>> 16);
        b[p + 3] = (byte) (v >>> 24);
        return p + 4;
    }
}
