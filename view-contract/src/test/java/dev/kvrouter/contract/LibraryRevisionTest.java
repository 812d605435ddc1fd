package dev.kvrouter.contract;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The library's revision moves with its code: a running job refuses to replace a later revision
 * (ViewConnection.loadViewFunctions), which only works if every change of the library is a new one. The register is
 * the contract's {@code library_revisions}; the build gives the library the registered revision whose hash it has, else
 * the next one, which this test refuses until its hash is registered.
 */
class LibraryRevisionTest {

    @Test
    void everyChangeOfTheLibraryIsARegisteredRevision() throws Exception {
        Map<Integer, String> registered = new TreeMap<>();
        try (InputStream in = LibraryRevisionTest.class.getResourceAsStream("/kvr-view.yaml")) {
            assertThat(in).as("kvr-view.yaml on the classpath").isNotNull();
            for (JsonNode r : new ObjectMapper(new YAMLFactory()).readTree(in).get("library_revisions")) {
                registered.put(Integer.parseInt(r.get("name").asText().substring(1)), r.get("sha256").asText());
            }
        }
        int revision = ViewLayout.libraryRevision();
        String sha = sha256(ViewLayout.functionLibrary());
        assertThat(registered.get(revision))
                .as("the library (sha256 %s) is no registered revision: a change of the library is a new one — add "
                        + "'  - name: r%d / sha256: %s / description: what it changes' to library_revisions in "
                        + "view-contract/src/main/resources/kvr-view.yaml", sha, revision, sha)
                .isEqualTo(sha);
        assertThat(registered.keySet()).as("the newest registered revision is the library's").last().isEqualTo(revision);
    }

    private static String sha256(String text) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    }
}
