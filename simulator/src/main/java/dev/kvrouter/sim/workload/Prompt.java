package dev.kvrouter.sim.workload;

import java.util.ArrayList;
import java.util.List;

/**
 * A prompt as a list of token segments, each a deterministic run of token ids drawn from its seed:
 * equal segment prefixes give equal token prefixes, and a whole trace fits in memory because the
 * tokens are only materialised when they are hashed or published. A prompt that arrived as token ids
 * (an HTTP request to a simulated engine) holds them as they are ({@link #ofTokens}).
 */
public final class Prompt {

    /** Vocabulary size of the synthetic tokens (Llama 2's). */
    public static final int VOCAB = 32_000;

    /** {@code length} tokens drawn from {@code seed}; token i of the segment depends only on (seed, i). */
    public record Segment(long seed, int length) {
        public Segment {
            if (length < 0) {
                throw new IllegalArgumentException("a segment cannot be negative: " + length);
            }
        }
    }

    private final List<Segment> segments;
    private final int length;
    /** The token ids of a prompt made from them (no segments); null for a segment prompt. */
    private final int[] literal;

    public Prompt(List<Segment> segments) {
        this.segments = List.copyOf(segments);
        this.length = this.segments.stream().mapToInt(Segment::length).sum();
        this.literal = null;
    }

    private Prompt(int[] tokens) {
        this.segments = List.of();
        this.length = tokens.length;
        this.literal = tokens.clone();
    }

    /** A prompt of these token ids, as a client sent them. */
    public static Prompt ofTokens(int[] tokens) {
        return new Prompt(tokens);
    }

    public static Prompt of(Segment... segments) {
        return new Prompt(List.of(segments));
    }

    /** This prompt followed by more segments (the next chat turn); a prompt of token ids has none to extend. */
    public Prompt extend(Segment... more) {
        if (literal != null) {
            throw new UnsupportedOperationException("a prompt of token ids is not extended by segments");
        }
        List<Segment> all = new ArrayList<>(segments);
        all.addAll(List.of(more));
        return new Prompt(all);
    }

    public List<Segment> segments() {
        return segments;
    }

    public int length() {
        return length;
    }

    public int[] tokens() {
        if (literal != null) {
            return literal.clone();
        }
        int[] out = new int[length];
        int p = 0;
        for (Segment s : segments) {
            for (int i = 0; i < s.length(); i++) {
                out[p++] = token(s.seed(), i);
            }
        }
        return out;
    }

    /** Token i of the segment with this seed: SplitMix64 of (seed, i), folded into the vocabulary. */
    static int token(long seed, int i) {
        long z = seed * 0x9E3779B97F4A7C15L + (i + 1) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        z = z ^ (z >>> 31);
        return (int) Math.floorMod(z, (long) VOCAB);
    }
}
