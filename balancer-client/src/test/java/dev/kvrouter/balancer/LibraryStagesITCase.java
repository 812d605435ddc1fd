package dev.kvrouter.balancer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvrouter.contract.ViewLayout;
import io.lettuce.core.ScriptOutputType;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each stage of the pick (view-contract/src/main/lua/kvrouter: the sweeps, filters, cost, choose, rules) against its own cases:
 * one Lua file a stage (src/test/resources/library-stages/&lt;stage&gt;.lua), run in Redis as one EVAL after the
 * library's body, so the stage's functions are called directly on a head built by hand. Adding a rule is its stage,
 * these cases, and the contract if it needs a new reason.
 */
class LibraryStagesITCase {

    /** The stage test files, in the library's order. */
    static final List<String> STAGES = List.of("20-reservations", "60-filters", "65-cost", "70-choose", "75-rules");

    @TempDir
    static Path dir;

    private static PrivateViewRedis view;

    @BeforeAll
    static void startRedis() {
        view = new PrivateViewRedis(dir.resolve("redis"));
    }

    @AfterAll
    static void stopRedis() {
        if (view != null) {
            view.close();
        }
    }

    /** The library without its first line (#!lua) and its registrations: its locals, callable by code after it. */
    static String libraryBody() {
        String library = ViewLayout.functionLibrary();
        String body = library.substring(library.indexOf('\n') + 1);
        return body.substring(0, body.indexOf("\nredis.register_function"));
    }

    static String resource(String name) {
        try (InputStream in = LibraryStagesITCase.class.getResourceAsStream("/library-stages/" + name)) {
            assertThat(in).as(name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @TestFactory
    Stream<DynamicTest> eachStageAgainstItsCases() {
        return STAGES.stream().map(stage -> DynamicTest.dynamicTest(stage, () -> {
            String script = libraryBody() + "\n" + resource("_helpers.lua") + resource(stage + ".lua") + "\nreturn failures\n";
            String prefix = "stage-" + stage + ":";
            List<Object> failures = view.redis.eval(script, ScriptOutputType.MULTI, new String[0], prefix);
            assertThat(failures).as("%s: the checks that failed", stage).isEmpty();
            // The keys a stage's cases wrote (the rules' class switch), so the next stage starts from an empty prefix.
            view.redis.keys(prefix + "*").forEach(view.redis::del);
        }));
    }
}
