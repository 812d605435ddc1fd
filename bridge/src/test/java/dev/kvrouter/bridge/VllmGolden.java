package dev.kvrouter.bridge;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/**
 * Reads the golden fixtures taken from vLLM's sources ({@code src/test/resources/vllm-golden/}, see
 * its README): text files as they are, and KV event payloads written as annotated hex. Shared with
 * the HTTP engines' tests through the bridge's test jar.
 */
public final class VllmGolden {

    private VllmGolden() {}

    /** A fixture's text, by its path under {@code vllm-golden/}. */
    public static String text(String name) {
        String path = "/vllm-golden/" + name;
        try (InputStream in = VllmGolden.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalArgumentException("no golden fixture " + path + " on the test classpath");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The bytes of a hex fixture: {@code #} starts a comment to the end of its line (the source, the
     * rule, what each byte means), whitespace separates nothing, the rest is hex digits.
     */
    public static byte[] hex(String name) {
        StringBuilder digits = new StringBuilder();
        for (String line : text(name).split("\n")) {
            int comment = line.indexOf('#');
            digits.append((comment < 0 ? line : line.substring(0, comment)).replaceAll("\\s+", ""));
        }
        return HexFormat.of().parseHex(digits);
    }
}
