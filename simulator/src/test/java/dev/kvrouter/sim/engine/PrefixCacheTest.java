package dev.kvrouter.sim.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class PrefixCacheTest {

    /** Admits a chain with nothing cached, stores all of it: the request is now running with it pinned. */
    private static void runWhole(PrefixCache cache, long... chain) {
        cache.admit(chain, 0, chain.length);
        cache.store(chain, 0, chain.length);
    }

    @Test
    void evictsLeastRecentlyFreedFirstAndNeverAPinnedBlock() {
        PrefixCache cache = new PrefixCache(4);
        long[] a = {10, 11};
        long[] b = {20, 21};
        runWhole(cache, a);
        runWhole(cache, b);
        assertThat(cache.used()).isEqualTo(4);
        assertThat(cache.pinned()).isEqualTo(4);

        cache.release(a, 2, 0);
        // Freed tail first: 11 is evicted before its parent 10, so the cache keeps whole prefixes.
        assertThat(cache.evictionOrder()).containsExactly(11L, 10L);
        assertThat(cache.pinned()).isEqualTo(2);

        assertThat(cache.canAllocate(new long[] {30}, 0, 1)).isTrue();
        assertThat(cache.admit(new long[] {30}, 0, 1)).containsExactly(11L);
        assertThat(cache.contains(10)).isTrue();
        assertThat(cache.contains(20)).isTrue(); // pinned by the running request b
        // Only 10 is evictable now: two more blocks cannot be had while b runs.
        assertThat(cache.canAllocate(new long[] {40, 41}, 0, 2)).isFalse();
        assertThat(cache.canAllocate(new long[] {40}, 0, 1)).isTrue();
    }

    @Test
    void matchesOnlyAConsecutivePrefix() {
        PrefixCache cache = new PrefixCache(8);
        runWhole(cache, 1, 2, 3);
        runWhole(cache, 7, 9);
        assertThat(cache.prefixMatch(new long[] {1, 2, 3, 4})).isEqualTo(3);
        assertThat(cache.prefixMatch(new long[] {1, 2})).isEqualTo(2);
        assertThat(cache.prefixMatch(new long[] {1, 5, 3})).isEqualTo(1);
        // Block 9 is cached but its ancestor 8 is not: no hit at all.
        assertThat(cache.prefixMatch(new long[] {8, 9})).isZero();
    }

    @Test
    void aHitPinsTheMatchedBlocksSoTheyAreNotEvictedForTheSameRequest() {
        PrefixCache cache = new PrefixCache(3);
        long[] a = {1, 2};
        runWhole(cache, a);
        cache.release(a, 2, 0);
        long[] longer = {1, 2, 3};
        int matched = cache.prefixMatch(longer);
        assertThat(matched).isEqualTo(2);
        assertThat(cache.canAllocate(longer, matched, 1)).isTrue();
        assertThat(cache.admit(longer, matched, 1)).isEmpty();
        assertThat(cache.store(longer, matched, 3)).containsExactly(true);
        assertThat(cache.pinned()).isEqualTo(3);
        assertThat(cache.canAllocate(new long[] {9}, 0, 1)).isFalse();
    }

    @Test
    void aBlockStoredMeanwhileByAnotherRequestIsSharedNotDuplicated() {
        PrefixCache cache = new PrefixCache(8);
        long[] chain = {1, 2};
        cache.admit(chain, 0, 2); // request x, prefilling
        cache.admit(chain, 0, 2); // request y, same prompt, admitted before x stored anything
        assertThat(cache.used()).isEqualTo(4);
        assertThat(cache.store(chain, 0, 2)).containsExactly(true, true);
        assertThat(cache.store(chain, 0, 2)).containsExactly(false, false);
        assertThat(cache.used()).isEqualTo(2);
        cache.release(chain, 2, 0);
        assertThat(cache.evictionOrder()).isEmpty(); // still pinned by the other request
        cache.release(chain, 2, 0);
        assertThat(cache.evictionOrder()).isEqualTo(List.of(2L, 1L));
    }
}
