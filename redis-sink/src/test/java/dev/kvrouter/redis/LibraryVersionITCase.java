package dev.kvrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvrouter.contract.RedisSecurity;
import dev.kvrouter.contract.ViewConnection;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.stack.LocalRedis;
import io.lettuce.core.ScriptOutputType;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A job loads its library over an older one, and refuses to replace a later one, saying which is which. */
class LibraryVersionITCase {

    @TempDir
    Path dir;

    @Test
    void anOlderLibraryIsReplacedALaterOneIsKeptAndTheJobSaysWhy() {
        try (LocalRedis redis = LocalRedis.start(dir.resolve("redis"));
             ViewConnection connection = ViewConnection.open(redis.url(), RedisSecurity.none(), Duration.ofSeconds(5), Duration.ofSeconds(5), 64)) {
            var r = connection.sync();
            // None loaded: loaded.
            connection.loadViewFunctions();
            assertThat((Long) r.fcallReadOnly(ViewLayout.REVISION_FUNCTION, ScriptOutputType.INTEGER)).isEqualTo(ViewLayout.libraryRevision());

            // A library from before revisions (its layout only): older, replaced.
            connection.loadFunctions(fake(ViewLayout.LAYOUT_VERSION, null));
            connection.loadViewFunctions();
            assertThat((Long) r.fcallReadOnly(ViewLayout.REVISION_FUNCTION, ScriptOutputType.INTEGER)).isEqualTo(ViewLayout.libraryRevision());

            // A later revision of this layout, and a later layout: kept, and the job says why.
            connection.loadFunctions(fake(ViewLayout.LAYOUT_VERSION, ViewLayout.libraryRevision() + 1));
            assertThatThrownBy(connection::loadViewFunctions).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("layout " + ViewLayout.LAYOUT_VERSION + ", revision " + (ViewLayout.libraryRevision() + 1))
                    .hasMessageContaining("later than this job's").hasMessageContaining("FUNCTION DELETE kvrouter");
            assertThat((Long) r.fcallReadOnly(ViewLayout.REVISION_FUNCTION, ScriptOutputType.INTEGER)).isEqualTo(ViewLayout.libraryRevision() + 1);
            connection.loadFunctions(fake(ViewLayout.LAYOUT_VERSION + 1, 1));
            assertThatThrownBy(connection::loadViewFunctions).hasMessageContaining("layout " + (ViewLayout.LAYOUT_VERSION + 1));
        }
    }

    /** A stand-in library answering only its layout (and revision, unless null). */
    private static String fake(int layout, Integer revision) {
        return "#!lua name=kvrouter\n"
                + "redis.register_function{function_name = 'kvr_layout', callback = function() return " + layout + " end, flags = {'no-writes'}}\n"
                + (revision == null ? "" : "redis.register_function{function_name = 'kvr_revision', callback = function() return " + revision
                        + " end, flags = {'no-writes'}}\n");
    }
}
