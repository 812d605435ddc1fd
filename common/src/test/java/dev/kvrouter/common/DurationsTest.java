package dev.kvrouter.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationsTest {

    @Test
    void aNumberAndAUnitWithOrWithoutASpace() {
        assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(Durations.parse("90 s")).isEqualTo(Duration.ofSeconds(90));
        assertThat(Durations.parse("10m")).isEqualTo(Duration.ofMinutes(10));
        assertThat(Durations.parse("10 min")).isEqualTo(Duration.ofMinutes(10));
        assertThat(Durations.parse("1h")).isEqualTo(Duration.ofHours(1));
        assertThat(Durations.parse("2 days")).isEqualTo(Duration.ofDays(2));
        assertThat(Durations.parse(" 30 SECONDS ")).isEqualTo(Duration.ofSeconds(30));
        assertThat(Durations.seconds("250ms")).isEqualTo(0.25);
    }

    @Test
    void aBareNumberOrAnUnknownUnitIsRefusedWithTheFormat() {
        for (String bad : new String[] {"90", "", "1.5s", "10 fortnights", "-3s", "s"}) {
            assertThatThrownBy(() -> Durations.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'" + bad + "'").hasMessageContaining("e.g. 500ms, 90s");
        }
        assertThatThrownBy(() -> Durations.parse(null)).hasMessageContaining("not a duration");
        assertThatThrownBy(() -> Durations.parse("99999999999999999999 d")).hasMessageContaining("too long");
    }
}
