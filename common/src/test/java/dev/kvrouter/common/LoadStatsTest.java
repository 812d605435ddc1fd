package dev.kvrouter.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.offset;

import java.util.Map;
import org.junit.jupiter.api.Test;

class LoadStatsTest {

    @Test
    void giniByHand() {
        assertThat(LoadStats.gini(new double[] {1, 1, 1, 1})).isZero();
        // sorted 0,0,0,1: 2*(4*1)/(4*1) - 5/4 = 0.75, the most a fleet of 4 can be
        assertThat(LoadStats.gini(new double[] {0, 1, 0, 0})).isCloseTo(0.75, offset(1e-12));
        // 1,2,3: 2*(1+4+9)/(3*6) - 4/3 = 4/18
        assertThat(LoadStats.gini(new double[] {3, 1, 2})).isCloseTo(4.0 / 18, offset(1e-12));
        // the pairwise definition, sum |xi - xj| / (2 n^2 mean), agrees: (1+2+1)*2 / (2*9*2) = 8/36
        assertThat(LoadStats.gini(new double[] {1, 2, 3})).isCloseTo(8.0 / 36, offset(1e-12));
        assertThat(LoadStats.gini(new double[] {0, 0})).isZero();
        assertThat(LoadStats.gini(new double[0])).isZero();
        assertThatThrownBy(() -> LoadStats.gini(new double[] {1, -1})).hasMessageContaining("negative");
    }

    @Test
    void hotEnginesAreAboveFactorTimesTheMean() {
        // mean 4: only 10 > 2 x 4
        assertThat(LoadStats.hot(Map.of("a", 1.0, "b", 2.0, "c", 3.0, "d", 10.0), 2.0)).containsExactly("d");
        assertThat(LoadStats.hot(Map.of("a", 0.0, "b", 0.0), 2.0)).isEmpty();
        // mean 0.5: 2 requests are not above 2 x max(0.5, 1); 3 are.
        assertThat(LoadStats.hot(Map.of("a", 2.0, "b", 0.0, "c", 0.0, "d", 0.0), 2.0)).isEmpty();
        assertThat(LoadStats.hot(Map.of("a", 3.0, "b", 0.0, "c", 0.0, "d", 0.0, "e", 0.0, "f", 0.0), 2.0)).containsExactly("a");
        assertThat(LoadStats.mean(new double[] {1, 2, 3, 10})).isEqualTo(4.0);
    }
}
