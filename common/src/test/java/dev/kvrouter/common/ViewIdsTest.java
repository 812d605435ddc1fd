package dev.kvrouter.common;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ViewIdsTest {

    @Test
    void anIdIsPresentBoundedAndFreeOfTheViewsSeparators() {
        assertThat(ViewIds.problem("engine_id", "vllm-a:0/rank.1", 512)).isEmpty();
        assertThat(ViewIds.problem("engine_id", null, 512)).contains("engine_id is missing");
        assertThat(ViewIds.problem("engine_id", "  ", 512)).contains("engine_id is missing");
        assertThat(ViewIds.problem("model", "m".repeat(17), 16)).contains("model is longer than 16 characters");
        assertThat(ViewIds.problem("model", "m".repeat(16), 16)).isEmpty();
        for (String separator : new String[] {",", "=", "|"}) {
            assertThat(ViewIds.problem("id", "a" + separator + "b", 512))
                    .contains("id 'a" + separator + "b' contains '" + separator + "': ids may not contain , = | or control characters");
        }
        assertThat(ViewIds.problem("id", "a\nb", 512)).hasValueSatisfying(p -> assertThat(p).contains("'\\u10'"));
    }
}
