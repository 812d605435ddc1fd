package dev.kvrouter.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The library's revision moves with its code: a running job refuses to replace a later revision
 * (ViewConnection.loadViewFunctions), which only works if every change of kvrouter.lua is a new one.
 */
class LibraryRevisionTest {

    @Test
    void everyChangeOfTheLibraryIsANewRevision() throws Exception {
        Map<Integer, String> recorded = new TreeMap<>();
        try (InputStream in = LibraryRevisionTest.class.getResourceAsStream("/kvrouter-revisions.txt")) {
            assertThat(in).as("kvrouter-revisions.txt").isNotNull();
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (!line.isBlank() && !line.startsWith("#")) {
                    String[] f = line.trim().split("\\s+");
                    recorded.put(Integer.parseInt(f[0]), f[1]);
                }
            }
        }
        int revision = ViewLayout.libraryRevision();
        String sha = sha256(ViewLayout.functionLibrary());
        assertThat(recorded.get(revision))
                .as("kvrouter.lua (sha256 %s) is not what revision %d recorded: a change of the library is a new revision — set "
                        + "'local REVISION = %d' in view-contract/src/main/lua/kvrouter/00-library.lua and add '%d <its new sha256>' to kvrouter-revisions.txt", sha, revision,
                        revision + 1, revision + 1)
                .isEqualTo(sha);
        assertThat(recorded.keySet()).as("the newest recorded revision is the library's").last().isEqualTo(revision);
    }

    private static String sha256(String text) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    }
}
