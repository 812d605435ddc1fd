package dev.kvrouter.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * 10 000 frames an engine (or anything that reaches its port) could send: valid batches with bytes
 * flipped, inserted, deleted, truncated or with a size field blown up, and plain noise. Each one is
 * either a batch or refused with a reason ({@link UndecodableFrameException}); nothing else escapes
 * (no other exception, no {@code OutOfMemoryError} or {@code StackOverflowError}), and the decoder
 * goes on decoding the valid batch afterwards: one bad frame never stops an engine's subscription.
 */
class KvEventDecoderFuzzTest {

    private static final int FRAMES = 10_000;

    @Test
    void whateverArrivesIsABatchOrARefusalWithAReasonAndTheNextGoodFrameDecodes() throws Exception {
        KvEventDecoder decoder = new KvEventDecoder();
        List<byte[]> seeds = new ArrayList<>();
        List<Long> hashes = VllmEventEncoder.hashes(7, 6);
        for (VllmEventEncoder.Encoding encoding : VllmEventEncoder.Encoding.values()) {
            for (boolean asMap : new boolean[] {false, true}) {
                seeds.add(VllmEventEncoder.batch(3.0, List.of(
                        VllmEventEncoder.blockStored(hashes, null, new int[] {1, 2, 3, 4, 5, 6}, 1, null, "GPU", null, List.of("k"), 0, null,
                                null).first(8),
                        VllmEventEncoder.blockRemoved(hashes.subList(0, 2), null, null).first(1),
                        VllmEventEncoder.allBlocksCleared()), 0, encoding, asMap));
            }
        }
        Random random = new Random(37);
        int refused = 0;
        int decoded = 0;
        for (int i = 0; i < FRAMES; i++) {
            byte[] frame = mutate(seeds.get(random.nextInt(seeds.size())), random);
            try {
                decoder.decode(frame);
                decoded++;
            } catch (UndecodableFrameException e) {
                assertThat(e.getMessage()).as("a refusal says why").isNotBlank();
                refused++;
            } catch (Throwable t) {
                throw new AssertionError("frame " + i + " (" + frame.length + " bytes) escaped as " + t, t);
            }
            if (i % 1_000 == 0) {
                assertThat(decoder.decode(seeds.get(0)).events()).as("the next good frame after %d", i).hasSize(3);
            }
        }
        assertThat(refused).as("most mutations are refused").isGreaterThan(FRAMES / 4);
        assertThat(decoded + refused).isEqualTo(FRAMES);
    }

    /** One of: flip bytes, insert, delete, truncate, a msgpack size header blown up, or noise. */
    private static byte[] mutate(byte[] seed, Random random) {
        byte[] f = seed.clone();
        switch (random.nextInt(6)) {
            case 0 -> {
                for (int k = 0; k <= random.nextInt(4); k++) {
                    f[random.nextInt(f.length)] = (byte) random.nextInt(256);
                }
            }
            case 1 -> {
                int at = random.nextInt(f.length + 1);
                byte[] g = new byte[f.length + 1 + random.nextInt(8)];
                System.arraycopy(f, 0, g, 0, at);
                for (int k = at; k < at + g.length - f.length; k++) {
                    g[k] = (byte) random.nextInt(256);
                }
                System.arraycopy(f, at, g, at + g.length - f.length, f.length - at);
                f = g;
            }
            case 2 -> {
                int at = random.nextInt(f.length);
                int n = Math.min(f.length - at, 1 + random.nextInt(8));
                byte[] g = new byte[f.length - n];
                System.arraycopy(f, 0, g, 0, at);
                System.arraycopy(f, at + n, g, at, f.length - at - n);
                f = g;
            }
            case 3 -> f = java.util.Arrays.copyOf(f, random.nextInt(f.length));
            case 4 -> {
                // An array32 or map32 header declaring up to 2^32 - 1 elements where a small header was.
                int at = random.nextInt(f.length);
                byte[] g = new byte[f.length + 4];
                System.arraycopy(f, 0, g, 0, at);
                g[at] = (byte) (random.nextBoolean() ? 0xdd : 0xdf);
                for (int k = 1; k <= 4; k++) {
                    g[at + k] = (byte) 0xff;
                }
                System.arraycopy(f, at + 1, g, at + 5, f.length - at - 1);
                f = g;
            }
            default -> {
                f = new byte[random.nextInt(256)];
                random.nextBytes(f);
            }
        }
        return f;
    }
}
