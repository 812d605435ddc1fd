package dev.kvrouter.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The library stays readable: one file per stage of a pick (src/main/lua/kvrouter), no function over 60 lines, the
 * decision itself included.
 */
class LibraryShapeTest {

    private static final int MAX_LINES = 60;

    /** Each top-level function of the joined library (a line at column 0 that opens one) and its length in lines. */
    static Map<String, Integer> functionLengths(String library) {
        Map<String, Integer> lengths = new LinkedHashMap<>();
        String[] lines = library.split("\n", -1);
        String open = null;
        int start = 0;
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (open == null && !line.startsWith(" ") && !line.startsWith("--") && line.contains("function")
                    && !line.matches(".*\\bfunction\\b.*\\bend\\b.*")) { // (a function on one line is short)
                open = line;
                start = i;
            } else if (open != null && line.startsWith("end")) {
                lengths.put(open, i - start + 1);
                open = null;
            }
        }
        assertThat(open).as("a function left open").isNull();
        return lengths;
    }

    @Test
    void noFunctionIsOverSixtyLines() {
        Map<String, Integer> lengths = functionLengths(ViewLayout.functionLibrary());
        assertThat(lengths).hasSizeGreaterThan(50);
        List<String> long_ = new ArrayList<>();
        lengths.forEach((f, n) -> {
            if (n > MAX_LINES) {
                long_.add(n + " lines: " + f);
            }
        });
        assertThat(long_).as("functions over %d lines", MAX_LINES).isEmpty();
        assertThat(lengths.entrySet().stream().filter(e -> e.getKey().startsWith("local function decide(")).findFirst())
                .as("decide").hasValueSatisfying(e -> assertThat(e.getValue()).isLessThanOrEqualTo(MAX_LINES));
    }

    /** The check above is only worth something if it measures what it says. */
    @Test
    void theMeasureFindsEachFunctionsLength() {
        String lua = "local function a(x)\n  return x\nend\n\nlocal f = memo(function(v)\n  local y = v\n  return y\nend)\n"
                + "local function b() return 1 end\nredis.register_function{name = 'x', callback = function() return 1 end, flags = {}}\n";
        assertThat(functionLengths(lua)).containsExactly(Map.entry("local function a(x)", 3), Map.entry("local f = memo(function(v)", 4));
    }

    @Test
    void theStagesAreFilesOfTheirOwnJoinedInNameOrder() throws IOException {
        Path dir = Path.of("src", "main", "lua", "kvrouter");
        List<String> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".lua")).sorted().toList();
        }
        assertThat(files).contains("60-filters.lua", "65-cost.lua", "70-choose.lua", "75-rules.lua", "80-match.lua", "55-reserve.lua",
                "40-head.lua");
        String library = ViewLayout.functionLibrary();
        int at = 0;
        for (String f : files) {
            // The revision is filled in from the contract's register (LibraryRevisionTest).
            String text = Files.readString(dir.resolve(f)).replace("@REVISION@", Integer.toString(ViewLayout.libraryRevision()));
            int found = library.indexOf(text, at);
            assertThat(found).as(f + " joined in name order").isGreaterThanOrEqualTo(at);
            at = found + text.length();
        }
    }
}
