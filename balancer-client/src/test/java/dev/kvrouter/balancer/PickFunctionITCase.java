package dev.kvrouter.balancer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvrouter.balancer.KvRouterClient;
import dev.kvrouter.balancer.KvRouterClient.Pick;
import dev.kvrouter.balancer.KvRouterClient.Source;
import dev.kvrouter.balancer.PickPolicy;
import dev.kvrouter.blocks.CanonicalBlockHasher;
import dev.kvrouter.contract.EngineEntry;
import dev.kvrouter.contract.ViewLayout;
import dev.kvrouter.stack.StackAddresses;
import dev.kvrouter.stack.TcpProxy;
import dev.kvrouter.stack.junit.LocalStackExtension;
import dev.kvrouter.stack.junit.UniqueNames;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@code kvr_pick} on the real Redis, on a view laid out by hand exactly as the sink writes it. */
@ExtendWith(LocalStackExtension.class)
class PickFunctionITCase {

    /** Whether the client picks itself from plain reads (Redis Cluster mode) rather than calling kvr_pick. */
    boolean clientSide() {
        return false;
    }

    KvRouterClient.Options options(String redisUrl) {
        KvRouterClient.Options o = KvRouterClient.Options.defaults(redisUrl).withKeyPrefix(layout.prefix());
        return clientSide() ? o.withClientSidePick() : o;
    }

    /**
     * A balancer that holds requests up to {@code hold}. The holding cases sleep past a second and the
     * view is written once, at setUp: with the default 2 s max age a slow client start would make it
     * stale midway and nothing would be held. (A stale view holding nothing is its own case.)
     */
    KvRouterClient.Options holdingFor(StackAddresses stack, Duration hold) {
        return options(stack.redisUrl()).holding(hold).withMaxViewAge(Duration.ofSeconds(30));
    }

    /** Picks as a balancer would; client-side, the snapshot is read first so a test's last write counts. */
    Pick pick(KvRouterClient client, long[] prompt) {
        return pick(client, prompt, null);
    }

    Pick pick(KvRouterClient client, long[] prompt, String prefixClass) {
        return pick(client, prompt, prefixClass, null);
    }

    Pick pick(KvRouterClient client, long[] prompt, String prefixClass, String clientId) {
        if (clientSide()) {
            client.refresh();
        }
        return client.pick(prompt, prefixClass, clientId);
    }

    private static final long TAU = 600_000;

    private RedisClient client;
    private StatefulRedisConnection<String, String> connection;
    private RedisCommands<String, String> redis;
    private ViewLayout layout;
    private KvRouterClient router;
    private long[] chain;
    private long now;

    @BeforeEach
    void setUp(StackAddresses stack) {
        client = RedisClient.create(stack.redisUrl());
        connection = client.connect();
        redis = connection.sync();
        redis.functionLoad(ViewLayout.functionLibrary(), true);
        layout = new ViewLayout(UniqueNames.redisPrefix("it-pick"));
        router = new KvRouterClient(options(stack.redisUrl()));
        chain = new CanonicalBlockHasher(16).chain("m", null, IntStream.range(0, 64).toArray(), List.of());
        now = System.currentTimeMillis();
        freshMeta();
        engine("e1", "READY", 1, 1);
        engine("e2", "READY", 2, 1);
        engine("e3", "READY", 0, 1);
        // The engines reported at `now`, and a reservation counts on an engine only when made after its last
        // report (score > load_ms): the picks start in a later millisecond, or a first reservation made in
        // setUp's millisecond would not count and the next pick would tie by id instead (a flaky test).
        while (System.currentTimeMillis() <= now) {
            Thread.onSpinWait(); // (a millisecond at most)
        }
    }

    @AfterEach
    void tearDown() {
        router.close();
        connection.close();
        client.shutdown();
    }

    @Test
    void theLongestConsecutivePrefixWins() {
        hold(1, "e1", "e2", "e3");
        hold(2, "e1", "e2", "e3");
        hold(3, "e1", "e2");
        hold(4, "e2"); // e3's run ends at 2, e1's at 3
        Pick p = pick(router, chain);
        assertThat(p).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason, Pick::source, Pick::bestHolderBlocks)
                .containsExactly("e2", 4, "AFFINITY", Source.VIEW, 4);
        assertThat(p.saving().outcome()).isEqualTo("HIT");
        assertThat(p.viewAgeMs()).isBetween(0L, 5_000L);
        assertThat(p.confidence()).isGreaterThan(0.9);
    }

    @Test
    void aStaleEpochOrADecayedEntryDoesNotCount() {
        hold(1, "e1", "e2");
        hold(2, "e1", "e2");
        hold(3, "e1", "e2");
        redis.hset(layout.groupKey(chain[1]), ViewLayout.hex(chain[2]),
                ViewLayout.holder("e1", now, 1) + "," + ViewLayout.holder("e2", now, 0)); // e2 restarted since
        assertThat(pick(router, chain).engineId()).isEqualTo("e1");
        assertThat(pick(router, chain).matchedBlocks()).isEqualTo(3);

        redis.hset(layout.groupKey(chain[0]), ViewLayout.hex(chain[0]), ViewLayout.holder("e1", now - 4 * TAU, 1));
        Pick cold = pick(router, chain);
        assertThat(cold.reason()).as("exp(-4) < the 0.05 floor").isEqualTo("COLD");
        assertThat(cold.engineId()).as("least loaded").isEqualTo("e3");
    }

    @Test
    void pastTheFirstBlockADecayedOrHalvedEntryEndsTheRunAndARunsConfidenceIsItsLastBlocks() {
        // e3 unsynced: its entries count at half confidence.
        redis.hset(layout.enginesKey(), "e3", new EngineEntry("READY", 0, 0, 500, TAU, 1, true, now, EngineEntry.BOTH).encode());
        for (int position = 1; position <= 4; position++) {
            long e1 = position >= 3 ? now - (long) (3.5 * TAU) : now; // exp(-3.5) = 0.030 < the 0.05 floor
            long e2 = position == 4 ? now - 2 * TAU : now;              // exp(-2) = 0.135
            long e3 = position >= 2 ? now - (long) (2.5 * TAU) : now;   // exp(-2.5) / 2 = 0.041 < the floor
            redis.hset(layout.groupKey(ViewLayout.tag(chain, position, 2)), ViewLayout.hex(chain[position - 1]),
                    ViewLayout.holder("e1", e1, 1) + "," + ViewLayout.holder("e2", e2, 1) + "," + ViewLayout.holder("e3", e3, 1));
        }
        Pick p = pick(router, chain);
        assertThat(p).extracting(Pick::engineId, Pick::matchedBlocks, Pick::bestHolderBlocks).containsExactly("e2", 4, 4);
        assertThat(p.confidence()).as("its 4th block's, stored 2 tau ago").isCloseTo(Math.exp(-2), Offset.offset(0.002));

        // Without e2, e1's run (2 blocks, ended by its decayed 3rd) beats e3's (1 block, ended by its halved 2nd).
        redis.hdel(layout.enginesKey(), "e2");
        Pick q = pick(router, chain);
        assertThat(q).extracting(Pick::engineId, Pick::matchedBlocks).containsExactly("e1", 2);
        assertThat(q.confidence()).isGreaterThan(0.99);
    }

    @Test
    void aLongPromptsRunIsFoundByBisectionAndAHoleOnAProbeEndsIt() {
        long[] longChain = new CanonicalBlockHasher(16).chain("m", null, IntStream.range(0, 2048 * 16).toArray(), List.of());
        Map<String, Map<String, String>> groups = new java.util.HashMap<>();
        for (int position = 1; position <= longChain.length; position++) {
            StringBuilder v = new StringBuilder(ViewLayout.holder("e1", now, position == 1024 ? 0 : 1)); // e1: an old epoch at 1 024
            if (position <= 1800) {
                v.append(',').append(ViewLayout.holder("e2", now, 1));
            }
            groups.computeIfAbsent(layout.groupKey(ViewLayout.tag(longChain, position, 2)), k -> new java.util.HashMap<>())
                    .put(ViewLayout.hex(longChain[position - 1]), v.toString());
        }
        groups.forEach(redis::hset);
        Pick p = pick(router, longChain);
        assertThat(p).extracting(Pick::engineId, Pick::matchedBlocks, Pick::bestHolderBlocks)
                .as("e2's run found between the probes at 1 024 and 2 048; e1's ended by its hole at 1 024, a probe")
                .containsExactly("e2", 1800, 1800);
        redis.hdel(layout.enginesKey(), "e2");
        assertThat(pick(router, longChain)).extracting(Pick::engineId, Pick::matchedBlocks).containsExactly("e1", 1023);

        redis.hset(layout.groupKey(ViewLayout.tag(longChain, 1024, 2)), ViewLayout.hex(longChain[1023]), ViewLayout.holder("e1", now, 1));
        assertThat(pick(router, longChain)).extracting(Pick::engineId, Pick::matchedBlocks).containsExactly("e1", 2048);
    }

    @Test
    void whereTheViewBreaksThePrefixPropertyTheRunEndsAtAHoleOnlyWhereAProbeLandsOnIt() {
        chain = new CanonicalBlockHasher(16).chain("m", null, IntStream.range(0, 8 * 16).toArray(), List.of()); // probes 2, 4, 8
        for (int position = 1; position <= 8; position++) {
            List<String> holders = new java.util.ArrayList<>();
            if (position != 3) {
                holders.add("e1"); // a hole at 3, between the probes at 2 and 4: passed over
            }
            if (position != 4) {
                holders.add("e2"); // a hole at 4, a probe: the run ends before it
            }
            hold(position, holders.toArray(String[]::new));
        }
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::bestHolderBlocks)
                .containsExactly("e1", 8, 8);
        redis.hdel(layout.enginesKey(), "e1");
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks).containsExactly("e2", 3);
    }

    @Test
    void aLayout8CallGivingTheViewsKeysIsRefusedSayingToUpgradeAndWritesNothing() {
        hold(1, "e1");
        hold(2, "e1"); // in the group of blocks 2..n, which the library names from the hashes and the tag depth
        String[] layout8 = {layout.metaKey(), layout.enginesKey(), layout.groupKey(ViewLayout.tag(chain, 1, 2)),
                layout.groupKey(ViewLayout.tag(chain, 2, 2)), layout.classesKey(), layout.reservationsKey()};
        String[] args = {"2000", "", "", "r-8", "2", ViewLayout.packedHex(chain, 2)};
        assertThatThrownBy(() -> redis.fcall(ViewLayout.PICK_FUNCTION, io.lettuce.core.ScriptOutputType.MULTI, layout8, args))
                .hasMessageContaining("(layout " + ViewLayout.LAYOUT_VERSION + "): expected 1 key, the reservations key")
                .hasMessageContaining("got 6").hasMessageContaining("must be upgraded");
        assertThat(redis.hget(layout.reservationsKey(), "r-8")).as("nothing reserved").isNull();
        assertThatThrownBy(() -> redis.fcall(ViewLayout.DONE_FUNCTION, io.lettuce.core.ScriptOutputType.INTEGER,
                new String[] {layout.enginesKey(), layout.reservationsKey()}, "r-8")).hasMessageContaining("expected 1 key");
        assertThatThrownBy(() -> redis.fcall(ViewLayout.PICK_FUNCTION, io.lettuce.core.ScriptOutputType.MULTI,
                new String[] {layout.metaKey()}, args)).hasMessageContaining("must be the reservations key <prefix>{head}:res");
        List<Object> answer = redis.fcall(ViewLayout.PICK_FUNCTION, io.lettuce.core.ScriptOutputType.MULTI, layout.functionKeys(), args);
        assertThat(answer.subList(0, 2)).as("the same call with the reservations key alone: the holder, both blocks found by their hashes")
                .containsExactly("e1", 2L);
        assertThat(redis.hget(layout.reservationsKey(), "r-8")).startsWith("e1|");
    }

    @Test
    void aLayout7CallWithOneArgumentPerHashIsRefusedSayingWhatToSend() {
        hold(1, "e1");
        String[] keys = layout.functionKeys();
        String[] args = {"2000", "", "", "", "2", ViewLayout.hex(chain[0]), ViewLayout.hex(chain[1])};
        assertThatThrownBy(() -> redis.fcall(ViewLayout.PICK_FUNCTION, io.lettuce.core.ScriptOutputType.MULTI, keys, args))
                .hasMessageContaining("layout " + ViewLayout.LAYOUT_VERSION)
                .hasMessageContaining("as one argument of 16*n hex digits, got 16 characters");
        args[5] = ViewLayout.packedHex(chain, 2);
        args[6] = "";
        List<Object> answer = redis.fcall(ViewLayout.PICK_FUNCTION, io.lettuce.core.ScriptOutputType.MULTI, keys, args);
        assertThat(answer.get(0))
                .as("the same call with the hashes packed").isEqualTo("e1");
    }

    @Test
    void aBusyHolderKeepsItsEntriesButIsSpilledFrom() {
        hold(1, "e1", "e2");
        hold(2, "e1", "e2");
        hold(3, "e2");
        engine("e2", "BUSY", 2, 1);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e1", 2, "REPLICA");
        engine("e1", "SUSPECT", 1, 1);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e3", 0, "SPILL_UNAVAILABLE");
    }

    @Test
    void aHolderWithEverySlotTakenIsSpilledFromWhileAnotherEngineHasOneFree() {
        hold(1, "e1", "e2");
        hold(2, "e1", "e2");
        hold(3, "e1");
        // e1 was seen full at 4 running; it runs 4 now: a request there would wait for one to finish.
        redis.hset(layout.enginesKey(), "e1", new EngineEntry("READY", 0, 4, 500, TAU, 1, false, now, "BOTH", 4).encode());
        engine("e2", "READY", 3, 1);
        engine("e3", "READY", 3, 1);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e2", 2, "REPLICA");
        // Every engine full: waiting is everywhere, and the longest holder keeps the request.
        redis.hset(layout.enginesKey(), "e2", new EngineEntry("READY", 0, 3, 500, TAU, 1, false, now, "BOTH", 3).encode());
        redis.hset(layout.enginesKey(), "e3", new EngineEntry("READY", 2, 3, 500, TAU, 1, false, now, "BOTH", 3).encode());
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e1", 3, "AFFINITY");
    }

    @Test
    void anEngineWhoseSlotsAreNotLearnedYetHasAsManyAsTheSmallestKnownNotAFreeOne() {
        hold(1, "e1");
        hold(2, "e1");
        redis.hset(layout.enginesKey(), "e1", new EngineEntry("READY", 0, 4, 500, TAU, 1, false, now, "BOTH", 4).encode());
        redis.hset(layout.enginesKey(), "e3", new EngineEntry("READY", 1, 3, 500, TAU, 1, false, now, "BOTH", 3).encode());
        // e2 never had requests waiting: its slots are unknown, taken as 3. It runs 4: full too.
        engine("e2", "READY", 4, 1);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .as("every engine full: the holder keeps it").containsExactly("e1", 2, "AFFINITY");
        engine("e2", "READY", 2, 1);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .as("e2 has a slot free").containsExactly("e2", 0, "SPILL_FULL");
    }

    @Test
    void withEverySlotTakenTheHolderKeepsARequestUntilASlotElsewhereComesSoonerThanThePrefillItSaves() {
        // 16 tokens/s, weight 2: the 4-block prompt costs 2 × 4 s = 8 s where it is not cached.
        // Every engine has 4 slots, all taken, and holds a request 4 s: 1 s per request ahead.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16", "uncached_prefill_weight", "2"));
        for (int position = 1; position <= 4; position++) {
            hold(position, "e1");
        }
        full("e1", 0);
        full("e2", 1);
        full("e3", 0);
        // e1: 1 s to a slot; e3: 1 s + 8 s.
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e1", 4, "AFFINITY");
        // e1 with 9 waiting (and the request just placed): 10 s or more to a slot; e3 still 9 s, e2 10 s.
        full("e1", 9);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e3", 0, "SPILL_SLOTS");
    }

    @Test
    void anEngineWhoseSlotTimeIsNotLearnedYetWaitsForASlotAsLongAsTheSlowestKnownOne() {
        // 16 tokens/s, weight 2: the 4-block prompt costs 8 s where it is not cached. Every engine
        // has 4 slots, all taken. e1 holds the prompt, 9 waiting, 4 s a slot: 10 s to a slot.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16", "uncached_prefill_weight", "2"));
        holdWholePrompt("e1");
        full("e1", 9, 4_000);
        full("e3", 9, 4_000);
        // e2 has had none of its requests finish (the first seconds of a burst): its slot time is
        // unknown, taken as 4 s. With 2 waiting: 3 s to a slot and 8 s of prefill, later than e1.
        full("e2", 2, 0);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .as("not a full engine that costs no wait").containsExactly("e1", 4, "AFFINITY");
        full("e2", 0, 0);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .as("1 s to a slot and 8 s of prefill: sooner than e1's 10 s").containsExactly("e2", 0, "SPILL_SLOTS");
    }

    @Test
    void betweenFullHoldersTheOneWithFewerAheadGoesFirstWhateverItsOwnLastSlotTimes() {
        // 16 tokens/s, weight 2: the 4-block prompt costs 8 s where it is not cached. Every engine has
        // its 4 slots taken; e1 and e2 hold the prompt. e1's last requests held a slot 2 s, e2's 6 s,
        // e3's 4 s: the fleet's pace is 4 s a slot, 1 s per request ahead. e1 has 6 waiting, e2 2.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16", "uncached_prefill_weight", "2"));
        holdWholePrompt("e1", "e2");
        full("e1", 6, 2_000);
        full("e2", 2, 6_000);
        full("e3", 20, 4_000);
        // By each engine's own slot time e1 would look sooner (7 × 0.5 s against 3 × 1.5 s); when a
        // slot frees depends on what its running requests still have to decode, which neither shows.
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks)
                .as("3 ahead at the fleet's pace, against 7").containsExactly("e2", 4);
    }

    private void full(String id, int waiting) {
        full(id, waiting, 4_000);
    }

    private void full(String id, int waiting, int slotMs) {
        redis.hset(layout.enginesKey(), id, new EngineEntry("READY", waiting, 4, 500, TAU, 1, false, now, EngineEntry.BOTH, 4,
                0, slotMs).encode());
    }

    @Test
    void aHotHolderAboveKTimesTheFleetMeanIsSpilledFrom() {
        hold(1, "e2");
        engine("e2", "READY", 100, 1);
        // mean = (1 + 100 + 0) / 3 = 33.7; 100 > 2 x 33.7
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e3", "SPILL_HOT");
    }

    @Test
    void whereItsDelayCanBePricedLoadAloneDoesNotTurnAHolderAwayItsDelayDoes() {
        // 16 tokens/s: a block of prefill is a second. e1 holds the 4-block prompt with 3 requests
        // against a fleet mean of 1.3: hot by load, but nothing queued for prefill, no slot full.
        // Every engine's slots (4) and slot time (4 s) are known: the delay prices the heat.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16"));
        holdWholePrompt("e1");
        running("e1", 3);
        running("e2", 1);
        running("e3", 0);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason).containsExactly("e1", 4, "AFFINITY");
        // Every slot of e1 taken (4 of 4) while others have one free: about 1 s to a slot there,
        // against 4 s of prefill (weighted 3) anywhere else. It stays.
        running("e1", 4);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e1", "AFFINITY");
        // With 12 more waiting (and the two placed since its report), 15 s to a slot: it goes.
        full("e1", 12, 4_000);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e3", "SPILL_SLOTS");
    }

    @Test
    void aFreeSlotBehindSecondsOfColdPrefillsIsNoReasonToLeaveAFullHolder() {
        // 16 tokens/s, weight 1: the 4-block prompt costs 4 s where it is not cached. e1 holds it
        // with every slot taken: 1 s to a slot. e2 and e3 have slots free, but 6 s of cold prefills
        // placed there by other balancers wait ahead of any new one (the first seconds of a burst).
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16", "uncached_prefill_weight", "1"));
        holdWholePrompt("e1");
        full("e1", 0, 4_000);
        running("e2", 0);
        running("e3", 0);
        long at = System.currentTimeMillis();
        redis.hset(layout.reservationsKey() + ":prefill", Map.of("e2", "6000.0|" + at, "e3", "6000.0|" + at));
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e1", 4, "AFFINITY");
        redis.hset(layout.reservationsKey() + ":prefill", "e3", "0.0|" + at);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason)
                .as("e3's queue drained: 4 s of prefill there, against 2 s to a slot on e1 (one more placed)")
                .containsExactly("e1", "AFFINITY");
        full("e1", 3, 4_000);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason)
                .as("3 waiting and 2 placed: 6 s to a slot on e1").containsExactly("e3", "SPILL_SLOTS");
    }

    @Test
    void beforeAnyRequestHasFinishedAFullEnginesOldestReservationBoundsItsSlotTime() {
        // No engine's slot time is known yet. e1 holds the prompt and is full (4 of 4); it took a
        // request 8 s ago that has not finished: its requests hold a slot at least 8 s, 2 s per
        // request ahead. 16 tokens/s, weight 1: 4 s of prefill anywhere else.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16", "uncached_prefill_weight", "1"));
        holdWholePrompt("e1");
        full("e1", 0, 0);
        running("e2", 0, 0);
        running("e3", 0, 0);
        redis.zadd(layout.engineReservationsKey("e1"), System.currentTimeMillis() - 8_000, "early-request");
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason).as("2 s to a slot against 4 s of prefill")
                .containsExactly("e1", "AFFINITY");
        full("e1", 1, 0);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason)
                .as("1 waiting, 1 placed: 6 s to a slot against 4 s of prefill").containsExactly("e2", "SPILL_SLOTS");
    }

    @Test
    void aFullHoldersWaitIsItsMeanSlotTimeOverItsSlotsPerRequestAheadWhateverEndedLately() {
        // 16 tokens/s, weight 1: the 4-block prompt costs 4 s where it is not cached. e1 holds it,
        // every one of its 4 slots taken, 1 waiting, 4 s a slot: 2 s to a slot at the mean's pace.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16", "uncached_prefill_weight", "1"));
        holdWholePrompt("e1");
        full("e1", 1, 4_000);
        running("e2", 0);
        running("e3", 0);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason)
                .as("2 s to a slot against 4 s of prefill").containsExactly("e1", "AFFINITY");
        // A request done elsewhere says nothing about when e1 frees a slot (pricing e1 by the pace of its
        // own last completions, none, would make it 4 s a slot, 12 s: run 9 measured that worse).
        long[] other = new CanonicalBlockHasher(16).chain("m", null, IntStream.range(1_000, 1_064).toArray(), List.of());
        Pick elsewhere = pick(router, other);
        assertThat(elsewhere.engineId()).as("7 s on e1 against 4 s of prefill on e2").isEqualTo("e2");
        assertThat(router.done(elsewhere.requestId())).isTrue();
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason)
                .as("1 waiting and 1 placed: 3 s to a slot on e1, against 4 s of prefill").containsExactly("e1", "AFFINITY");
    }

    @Test
    void untilTheFleetsSlotsAreLearnedAHolderWithRequestsWaitingIsHotByLoadAlone() {
        // No engine's slots known yet, so the delay cannot tell an engine is filling up; e1's report
        // shows 3 requests waiting, over 2 x the mean of 1.33.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16"));
        holdWholePrompt("e1");
        engine("e1", "READY", 3, 1);
        engine("e2", "READY", 1, 1);
        engine("e3", "READY", 0, 1);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e3", "SPILL_HOT");
    }

    @Test
    void untilTheFleetsSlotsAreLearnedAHolderWithNothingWaitingIsHotOnlyByWhatWasPlacedThereSince() {
        // No engine's slots known yet. e1 ran 3 requests with none waiting at its last report: it had a
        // slot free for each, so the prompt's next requests start there at once (run 9: its running
        // requests alone made it hot, and a popular prompt went cold to other engines).
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16"));
        holdWholePrompt("e1");
        for (String[] e : new String[][] {{"e1", "3"}, {"e2", "1"}, {"e3", "0"}}) {
            redis.hset(layout.enginesKey(), e[0], new EngineEntry("READY", 0, Integer.parseInt(e[1]), 500, TAU, 1, false, now).encode());
        }
        List<String> reasons = IntStream.range(0, 10).mapToObj(i -> pick(router, chain).reason()).toList();
        // Placed since e1's report: 9 before the tenth pick, over 2 x the mean (3 + 9 + 1 + 0) / 3.
        assertThat(reasons.subList(0, 9)).as("e1 took 8 since its report, not over 2 x 4").containsOnly("AFFINITY");
        assertThat(reasons.get(9)).isEqualTo("SPILL_HOT");
    }

    /** A READY engine with 4 slots and a 4 s slot time learned, running {@code count} requests. */
    private void running(String id, int count) {
        running(id, count, 4_000);
    }

    private void running(String id, int count, int slotMs) {
        redis.hset(layout.enginesKey(), id, new EngineEntry("READY", 0, count, 500, TAU, 1, false, System.currentTimeMillis(),
                EngineEntry.BOTH, 4, 0, slotMs).encode());
    }

    @Test
    void inANearlyIdleFleetAHolderWithTwoRequestsIsNotHot() {
        hold(1, "e1");
        engine("e1", "READY", 2, 1);
        engine("e2", "READY", 0, 1);
        engine("e3", "READY", 0, 1);
        // mean 0.67: 2 is over 2 x the mean but not over 2 requests; a third would be.
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e1", "AFFINITY");
        engine("e1", "READY", 3, 1);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e2", "SPILL_HOT");
    }

    @Test
    void placementsBetweenTwoLoadReportsCountAsLoadInsteadOfAllLandingOnTheLeastLoadedEngine() {
        // No holder: every pick is COLD, on load alone. Reported loads e1 1, e2 2, e3 0; each pick
        // adds one waiting request to its engine until that engine reports again (ties by id).
        List<String> placed = IntStream.range(0, 6).mapToObj(i -> pick(router, chain).engineId()).toList();
        assertThat(placed).containsExactly("e3", "e1", "e3", "e1", "e2", "e3");

        // e3 reports after those picks: its report includes them, so they stop counting there.
        long later = System.currentTimeMillis() + 1;
        redis.hset(layout.enginesKey(), "e3", new EngineEntry("READY", 3, 0, 500, TAU, 1, false, later).encode());
        redis.hset(layout.enginesKey(), "e1", new EngineEntry("READY", 0, 0, 500, TAU, 1, false, later).encode());
        assertThat(pick(router, chain).engineId()).as("e1 0 (its picks reported), e2 2 + 1 picked, e3 3").isEqualTo("e1");
    }

    @Test
    void anObservingClientsAnswersDoNotCountAsLoad(StackAddresses stack) {
        try (KvRouterClient observer = new KvRouterClient(options(stack.redisUrl()).observing())) {
            List<String> placed = IntStream.range(0, 4).mapToObj(i -> pick(observer, chain).engineId()).toList();
            assertThat(placed).as("asking is not sending: e3 (load 0) every time").containsOnly("e3");
        }
        assertThat(pick(router, chain).engineId()).as("nor does it count for another client").isEqualTo("e3");
        assertThat(pick(router, chain).engineId()).as("this client's own pick does").isEqualTo("e1");
    }

    @Test
    void everyLoadReportIsReadAsWrittenHoweverManyReportsThePicksHaveReadBefore(StackAddresses stack) {
        // The function keeps the engine entries it has parsed between calls, dropping them all past a
        // few thousand texts: a new report must be read as written, before that bound and after it.
        try (KvRouterClient observer = new KvRouterClient(options(stack.redisUrl()).observing())) {
            for (int report = 0; report < 4_500; report++) {
                boolean loaded = report % 2 == 1;
                redis.hset(layout.enginesKey(), "e3", new EngineEntry("READY", loaded ? 5 : 0, 0, 500, TAU, 1, false, now + report,
                        EngineEntry.BOTH).encode());
                assertThat(pick(observer, new long[] {1, 2, 3}).engineId()).as("report %d", report).isEqualTo(loaded ? "e1" : "e3");
            }
        }
    }

    @Test
    void withThePrefillRateKnownARequestGoesWhereItCostsTheLeastDelay() {
        // 16 tokens/s: one 16-token block of prefill is a second. e1 holds the first of 4 blocks.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16", "uncached_prefill_weight", "2"));
        hold(1, "e1");
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .as("nothing queued yet: the holder").containsExactly("e1", 1, "AFFINITY");
        // Delay: queued prefill + 2 × the uncached blocks' prefill. e1 has this client's 3 uncached
        // blocks (3 s) queued: 3 + 2 × 3 = 9 s there, 2 × 4 = 8 s on e2 or e3 (e3: load 0 against 2).
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e3", 0, "SPILL_QUEUE");
        // e1 9 s, e3 4 + 8 = 12 s, e2 8 s.
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e2", 0, "SPILL_QUEUE");
    }

    @Test
    void aHolderThatPrefillsSlowerIsPricedAtItsOwnRate() {
        // Configured 16 tokens/s: a 16-token block is a second. e1 holds 2 of the 4 blocks but was
        // measured at 4 tokens/s: its 2 missing blocks cost 2 × 2 × 4 s = 16 s there, the whole
        // prompt 2 × 4 × 1 s = 8 s elsewhere.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16", "uncached_prefill_weight", "2"));
        hold(1, "e1");
        hold(2, "e1");
        learnedRate("e1", 1, 4);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e3", 0, "SPILL_PREFILL");
        // Measured at 64 tokens/s: 2 × 2 × 0.25 s = 1 s on e1. It keeps the request, and the prefill
        // queued there is its 2 uncached blocks, 0.5 s at its own rate.
        learnedRate("e1", 1, 64);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e1", 2, "AFFINITY");
        // (kept as tokens, 32 of them, priced at the engine's rate whenever read: 500 ms at 64 tokens/s)
        assertThat(redis.hget(layout.reservationsKey() + ":prefill", "e1")).startsWith("t32.0|");
    }

    @Test
    void requestsSpilledFromABusyHolderGoWhereTheyCostTheLeastDelayNotOnlyTheLeastLoad() {
        // 16 tokens/s: a 16-token block of prefill is a second. e1 holds the whole prompt but is busy.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16", "uncached_prefill_weight", "3"));
        holdWholePrompt("e1");
        engine("e1", "BUSY", 9, 1);
        engine("e2", "READY", 0, 1);
        engine("e3", "READY", 2, 1);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e2", "SPILL_UNAVAILABLE");
        // e2 now has that prompt's 4 s of prefill queued: 4 + 3 × 4 = 16 s there against 12 s on e3,
        // although e3 carries more requests (2 against 1).
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e3", "SPILL_UNAVAILABLE");
    }

    @Test
    void coldCopiesOfAPromptGoWhereTheLeastPrefillIsQueuedNotOnlyTheLeastLoad() {
        // 16 tokens/s: the 4-block prompt is 4 s of prefill. Nobody holds it.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16"));
        engine("e1", "READY", 1, 1);
        engine("e2", "READY", 3, 1);
        engine("e3", "READY", 0, 1);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e3", "COLD");
        // e3 (1 request now) has 4 s of prefill queued, e1 (1) none: e1, not the lower id's tie-break alone.
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e1", "COLD");
        // e1 and e3 each have a prompt queued: e2, although it carries the most requests.
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e2", "COLD");
    }

    @Test
    void aHeavierWeightOnUncachedPrefillKeepsTheHolder() {
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16", "uncached_prefill_weight", "3.5"));
        hold(1, "e1");
        pick(router, chain);
        // e1: 3 s queued + 3.5 × 3 s = 13.5 s; e2, e3: 3.5 × 4 s = 14 s (with 2, 9 s against 8: e2 or e3).
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e1", 1, "AFFINITY");
    }

    @Test
    void everyPickIsTimedAndCountedByReasonAndAnOldViewCountsAsAFallbackInTheBalancersRegistry(StackAddresses stack) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (KvRouterClient metered = new KvRouterClient(options(stack.redisUrl()).withMeters(registry))) {
            hold(1, "e1");
            pick(metered, chain);
            pick(metered, chain);
            pick(metered, new CanonicalBlockHasher(16).chain("m", null, IntStream.range(500, 564).toArray(), List.of()));
            engine("e1", "BUSY", 1, 1);
            pick(metered, chain);
            redis.hset(layout.metaKey(), "updated_ms", Long.toString(now - 60_000));
            pick(metered, chain);

            // The reason label is the family (what alert rules written for SPILL_BUSY match); the detail is the reason itself.
            String scraped = registry.scrape();
            assertThat(scraped).contains("kvr_client_picks_total{detail=\"AFFINITY\",reason=\"AFFINITY\"} 2.0",
                    "kvr_client_picks_total{detail=\"COLD\",reason=\"COLD\"} 1.0",
                    "kvr_client_picks_total{detail=\"SPILL_UNAVAILABLE\",reason=\"SPILL_BUSY\"} 1.0",
                    "kvr_client_picks_total{detail=\"FALLBACK_LOAD_ONLY\",reason=\"FALLBACK_LOAD_ONLY\"} 1.0",
                    "kvr_client_fallbacks_total{source=\"FALLBACK_STALE_VIEW\"} 1.0",
                    "kvr_client_pick_latency_seconds_count 5",
                    "# TYPE kvr_client_pick_latency_seconds histogram")
                    .doesNotContain("source=\"FALLBACK_REDIS_DOWN\"");
            assertThat(scraped.lines().filter(l -> l.startsWith("kvr_client_pick_latency_seconds_bucket")).count())
                    .as("histogram buckets from 50 µs to 1 s").isGreaterThan(10);
        }
    }

    @Test
    void anOldViewFallsBackToLeastLoadedAndSaysSo() {
        engine("e1", "READY", 5, 1); // e3 stays the least loaded with this client's first pick counted there
        hold(1, "e1");
        redis.hset(layout.metaKey(), "updated_ms", Long.toString(now - 60_000));
        Pick p = pick(router, chain);
        assertThat(p).extracting(Pick::engineId, Pick::reason, Pick::source)
                .containsExactly("e3", "FALLBACK_LOAD_ONLY", Source.FALLBACK_STALE_VIEW);
        assertThat(p.viewAgeMs()).isGreaterThanOrEqualTo(60_000);

        redis.del(layout.metaKey());
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::source).containsExactly("e3", Source.FALLBACK_STALE_VIEW);
    }

    @Test
    void redisDownFallsBackToTheLastKnownLoadsAndSaysSo(StackAddresses stack) throws Exception {
        hold(1, "e1");
        String[] hostPort = stack.redisHostPort().split(":");
        TcpProxy proxy = new TcpProxy(hostPort[0], Integer.parseInt(hostPort[1]));
        try (KvRouterClient viaProxy = new KvRouterClient(options("redis://127.0.0.1:" + proxy.port()))) {
            assertThat(pick(viaProxy, chain)).extracting(Pick::engineId, Pick::source).containsExactly("e1", Source.VIEW);
            assertThat(viaProxy.engines()).containsOnlyKeys("e1", "e2", "e3"); // as the background copy does each second
            proxy.close(); // Redis is gone for this client, and stays gone
            Pick p = viaProxy.pick(chain); // no refresh: Redis is gone
            assertThat(p).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason, Pick::source)
                    .containsExactly("e3", 0, "FALLBACK_LOAD_ONLY", Source.FALLBACK_REDIS_DOWN);
        }
    }

    @Test
    void eachPlacementSaysThePrefillItSavesAndTheWaitItAddsAndAHolderIsKeptOnlyWhileTheWeightedSavingOutweighsTheWait() {
        // 16 tokens/s: a block of prefill is a second. e1 holds 2 of the prompt's 4 blocks: it saves 2 s of prefill.
        // Slots and slot times known (8 each, 20 s): the wait is priced, no load threshold turns a holder away.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16", "uncached_prefill_weight", "3.5"));
        for (String e : List.of("e1", "e2", "e3")) {
            redis.hset(layout.enginesKey(), e, new EngineEntry("READY", 0, 0, 500, TAU, 1, false, now, EngineEntry.BOTH, 8, 0, 20_000).encode());
        }
        hold(1, "e1");
        hold(2, "e1");
        Pick first = pick(router, chain);
        assertThat(first).extracting(Pick::engineId, Pick::reason).containsExactly("e1", "AFFINITY");
        assertThat(first.saving().prefillMs()).isEqualTo(2_000.0);
        assertThat(first.saving().addedWaitMs()).as("nothing queued anywhere yet").isZero();
        // Each placement on e1 queues its 2 uncached blocks there (2 s). e1 keeps the prompt while its
        // queue stays within 3.5 x the 2 s it saves: 2 + 3.5 x 2 = 9 s there against 3.5 x 4 = 14 s on e2
        // and e3, then 11 s, then 13 s, then 15 s — within 10 % of 14 s, the same delay (SAME_DELAY), where the
        // longer run wins: still e1 (its blocks live 10 min: a wait of seconds leaves them all).
        for (double queued : new double[] {2_000, 4_000, 6_000, 8_000}) {
            Pick p = pick(router, chain);
            assertThat(p).extracting(Pick::engineId, Pick::reason).containsExactly("e1", "AFFINITY");
            assertThat(p.saving().prefillMs()).isEqualTo(2_000.0);
            assertThat(p.saving().addedWaitMs()).as("the queue on e1 against none elsewhere").isBetween(queued - 500, queued);
        }
        // 10 + 7 s: more than the prompt costs cold elsewhere. Placed where it starts at once, it adds no wait.
        Pick cold = pick(router, chain);
        assertThat(cold.engineId()).isIn("e2", "e3");
        assertThat(cold.reason()).isEqualTo("SPILL_QUEUE");
        assertThat(cold.saving().prefillMs()).isZero();
        assertThat(cold.saving().addedWaitMs()).isZero();
    }

    @Test
    void oneShotPromptsWhoseOnlySharedPartIsAShortTemplateAreNotPinnedToItsHolder() {
        // The long-tail defence is the price: a one-shot prompt that shares its first block (a chat template)
        // with one engine saves a second there, so it waits there for at most 3 s more than elsewhere. e1 has
        // 10 s queued: 10 + 3 x 3 s there; each one-shot queues its 4 s elsewhere, 4 + 3 x 4 s after the first.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16", "uncached_prefill_weight", "3"));
        long[] template = new CanonicalBlockHasher(16).chain("m", null, IntStream.range(0, 16).toArray(), List.of());
        redis.hset(layout.groupKey(ViewLayout.tag(template, 1, 2)), ViewLayout.hex(template[0]), ViewLayout.holder("e1", now, 1));
        redis.hset(layout.reservationsKey() + ":prefill", "e1", "10000.0|" + System.currentTimeMillis());
        for (int i = 0; i < 3; i++) {
            int[] tokens = IntStream.concat(IntStream.range(0, 16), IntStream.range(1_000 * (i + 1), 1_000 * (i + 1) + 48)).toArray();
            long[] oneShot = new CanonicalBlockHasher(16).chain("m", null, tokens, List.of());
            assertThat(oneShot[0]).isEqualTo(template[0]);
            Pick p = pick(router, oneShot, "one-shot");
            assertThat(p.engineId()).as("one-shot %d", i).isNotEqualTo("e1");
            assertThat(p.bestHolderBlocks()).isEqualTo(1);
            assertThat(p.saving().addedWaitMs()).isZero();
        }
        // A prompt nobody holds any of goes where it starts soonest, adding no wait, with nothing to save.
        Pick unique = pick(router, new CanonicalBlockHasher(16).chain("m", null, IntStream.range(9_000, 9_064).toArray(), List.of()),
                "one-shot");
        assertThat(unique).extracting(Pick::reason, Pick::bestHolderBlocks).containsExactly("COLD", 0);
        assertThat(unique.saving()).isEqualTo(PickPolicy.Saving.NONE);
    }

    @Test
    void theWaitAPlacementAddsIsCountedAgainstWhereItWouldGoWithNoCacheNotAgainstTheIdlestEngine() {
        // 16 tokens/s configured. e3 is idle but prefills at 4 tokens/s; e1 and e2 have 1 s of prefill queued.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16", "uncached_prefill_weight", "3"));
        learnedRate("e3", 0, 4);
        long at = System.currentTimeMillis();
        redis.hset(layout.reservationsKey() + ":prefill", Map.of("e1", "1000.0|" + at, "e2", "1000.0|" + at));
        // Nobody holds the prompt: e1 (1 + 3 x 4 s) rather than e3 (3 x 16 s). No cache decided it: it adds no wait.
        Pick cold = pick(router, chain);
        assertThat(cold).extracting(Pick::engineId, Pick::reason).containsExactly("e1", "COLD");
        assertThat(cold.saving().addedWaitMs()).isZero();
        // e2 holds 2 of the 4 blocks: 1 + 3 x 2 s there. Uncached the prompt would go to e2 as well (1 + 3 x 4 s;
        // e1 has the cold prompt's 4 s queued too now: 5 + 12 s): holding it there adds no wait.
        hold(1, "e2");
        hold(2, "e2");
        Pick hit = pick(router, chain);
        assertThat(hit).extracting(Pick::engineId, Pick::reason).containsExactly("e2", "AFFINITY");
        assertThat(hit.saving().prefillMs()).isEqualTo(2_000.0);
        assertThat(hit.saving().addedWaitMs()).as("e2 is where it would go uncached too").isZero();
    }

    @Test
    void theQueueAnEngineWasGivenIsReadAtTheRateItIsKnownToHaveNowSoASlowdownStretchesItAtOnce(StackAddresses stack) {
        // 16 tokens/s configured: a block is a second. e1 holds the whole prompt; e2 and e3 would compute it all: 3 x 4 s.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16", "uncached_prefill_weight", "3"));
        for (String e : List.of("e1", "e2", "e3")) {
            redis.hset(layout.enginesKey(), e, new EngineEntry("READY", e.equals("e1") ? 0 : 1, 0, 500, TAU, 1, false, now, EngineEntry.BOTH,
                    8, 0, 20_000).encode());
        }
        holdWholePrompt("e1");
        // A cold 4-block prompt lands on e1 (all cost the same; e1 has the fewest requests): 64 tokens queued there, 4 s.
        long[] other = new CanonicalBlockHasher(16).chain("m", null, IntStream.range(7_000, 7_064).toArray(), List.of());
        assertThat(pick(router, other)).extracting(Pick::engineId, Pick::reason).containsExactly("e1", "COLD");
        try (KvRouterClient looking = new KvRouterClient(options(stack.redisUrl()).observing())) {
            // 4 s of queue on the holder against 12 s of prefill anywhere else: the holder.
            assertThat(pick(looking, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e1", "AFFINITY");
            // Its chunks now show it at 4 tokens/s: the 64 tokens queued there are 16 s, not what is left of 4.
            redis.hset(layout.enginesKey(), "e1", new EngineEntry("READY", 0, 0, 500, TAU, 1, false, now, EngineEntry.BOTH, 8, 4, 20_000)
                    .encode());
            Pick away = pick(looking, chain);
            assertThat(away.engineId()).isIn("e2", "e3");
            assertThat(away.reason()).isEqualTo("SPILL_QUEUE");
        }
    }

    @Test
    void aHoldersRunCountsOnlyAsFarAsItOutlastsThePrefillQueuedAheadOfTheRequest(StackAddresses stack) {
        // 16 tokens/s: a block is a second. e1 holds the whole 4-block prompt and has 5 s of others' prefill
        // queued (80 tokens); e2 and e3 would compute the prompt: 3 x 4 s = 12 s.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16", "uncached_prefill_weight", "3"));
        holdWholePrompt("e1");
        redis.hset(layout.reservationsKey() + ":prefill", "e1", "t80.0|" + System.currentTimeMillis());
        try (KvRouterClient looking = new KvRouterClient(options(stack.redisUrl()).observing())) {
            // Deep caches (blocks live 10 min): the run outlasts the queue, 5 s there against 12 s cold elsewhere.
            Pick deep = pick(looking, chain);
            assertThat(deep).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason).containsExactly("e1", 4, "AFFINITY");
            assertThat(deep.saving().prefillMs()).as("4 s saved, 5 s of 10 min eroding it by under 1 %").isBetween(3_900.0, 4_000.0);
            // Caches a few prompts deep: e1's blocks live 2 s. Behind 5 s of other prompts' prefill 8 % of the run is
            // left when the request starts: 5 + 3 x 4 x 0.92 = 16 s there, more than cold elsewhere.
            redis.hset(layout.enginesKey(), "e1", new EngineEntry("READY", 0, 0, 500, 2_000, 1, false, now, EngineEntry.BOTH).encode());
            Pick shallow = pick(looking, chain);
            assertThat(shallow.engineId()).isIn("e2", "e3");
            assertThat(shallow).extracting(Pick::reason, Pick::bestHolderBlocks).containsExactly("SPILL_QUEUE", 4);
        }
        // With 1 s queued and blocks living 1.44 s (half the run is left after a second) e1 still wins:
        // 1 + 3 x 2 = 7 s. It is expected to save half the prompt, and queues the other half as its prefill.
        redis.hset(layout.enginesKey(), "e1", new EngineEntry("READY", 0, 0, 500, 1_443, 1, false, now, EngineEntry.BOTH).encode());
        redis.hset(layout.reservationsKey() + ":prefill", "e1", "t16.0|" + System.currentTimeMillis());
        Pick half = pick(router, chain);
        assertThat(half).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason).containsExactly("e1", 4, "AFFINITY");
        assertThat(half.saving().prefillMs()).as("2 of the 4 blocks' 4 s").isBetween(1_990.0, 2_010.0);
        String queued = redis.hget(layout.reservationsKey() + ":prefill", "e1");
        assertThat(Double.parseDouble(queued.substring(1, queued.indexOf('|'))))
                .as("what was left of the 16 tokens queued, and the 32 the placement recomputes: %s", queued).isBetween(47.0, 48.1);
    }

    @Test
    void enginesWhoseDelaysDifferByTheNoiseOfTheirLearnedRatesShareColdPromptsByLoad() {
        // No one holds the prompt. e2's rate was measured 6 % faster than e1's and e3's (the noise of
        // learning it from chunks), but it runs 3 requests against e1's none: the same delay within
        // SAME_DELAY, so the lower load takes it, not the engine measured fastest every time.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16", "uncached_prefill_weight", "3"));
        redis.hset(layout.enginesKey(), "e1", new EngineEntry("READY", 0, 0, 500, TAU, 1, false, now, EngineEntry.BOTH, 8, 16, 20_000).encode());
        redis.hset(layout.enginesKey(), "e2", new EngineEntry("READY", 0, 3, 500, TAU, 1, false, now, EngineEntry.BOTH, 8, 17, 20_000).encode());
        redis.hset(layout.enginesKey(), "e3", new EngineEntry("READY", 0, 2, 500, TAU, 1, false, now, EngineEntry.BOTH, 8, 16, 20_000).encode());
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e1", "COLD");
        // An engine truly slower (a quarter of the rate: a slowed engine) is not the same delay, whatever its load;
        // e2 and e3 are, and e3 runs fewer.
        redis.hset(layout.enginesKey(), "e1", new EngineEntry("READY", 0, 0, 500, TAU, 1, false, now, EngineEntry.BOTH, 8, 4, 20_000).encode());
        assertThat(pick(router, chain).engineId()).isEqualTo("e3");
    }

    @Test
    void waitingForASlotOnAFullHolderEvictsNothingTheRunCountsWhole(StackAddresses stack) {
        // 16 tokens/s: a block is a second; the 4-block prompt is 12 s cold anywhere (weight 3). e1 holds it,
        // its blocks live 2 s, and its one slot is taken by a request that ends in about 5 s; nothing is queued
        // to prefill there. A full engine admits no one until a request ends, so nothing evicts the run while
        // the request waits: 5 s there against 12 s elsewhere, and the whole run saved.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16", "uncached_prefill_weight", "3"));
        holdWholePrompt("e1");
        redis.hset(layout.enginesKey(), "e1", new EngineEntry("READY", 0, 1, 500, 2_000, 1, false, now, EngineEntry.BOTH, 1, 0, 5_000)
                .encode());
        try (KvRouterClient looking = new KvRouterClient(options(stack.redisUrl()).observing())) {
            Pick full = pick(looking, chain);
            assertThat(full).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason).containsExactly("e1", 4, "AFFINITY");
            assertThat(full.saving().prefillMs()).as("the whole run's 4 s").isBetween(3_990.0, 4_000.0);
        }
    }

    @Test
    void aPromptThatDoesNotFitAnEnginesKvRoomWaitsThereForARunningRequestToEnd(StackAddresses stack) {
        // 16 tokens/s: the 4-block (64-token) prompt is 12 s cold anywhere (weight 3). Each engine runs 2 of its 8
        // slots, a request holding one for 10 s. e1's KV cache has 10 tokens free (the job's engine.kv-room): the
        // prompt is admitted there once a running request ends, about 5 s; e2 and e3 have room.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16", "uncached_prefill_weight", "3"));
        long at = System.currentTimeMillis();
        for (String id : List.of("e1", "e2", "e3")) {
            long room = id.equals("e1") ? 10 : 10_000;
            redis.hset(layout.enginesKey(), id, new EngineEntry("READY", 0, 2, 900, TAU, 1, false, at, EngineEntry.BOTH, 8, 0, 10_000,
                    room).encode());
        }
        try (KvRouterClient looking = new KvRouterClient(options(stack.redisUrl()).observing())) {
            assertThat(pick(looking, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e2", "COLD");
            // Room published on none: the engines tie, and the id decides, as before the job published it.
            for (String id : List.of("e1", "e2", "e3")) {
                redis.hset(layout.enginesKey(), id, new EngineEntry("READY", 0, 2, 900, TAU, 1, false, at, EngineEntry.BOTH, 8, 0, 10_000)
                        .encode());
            }
            assertThat(pick(looking, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e1", "COLD");
        }
    }

    @Test
    void aClassIsNeverJudgedByItsHitRateTheFirstRequestAHolderCanServeGoesThere() {
        // Nothing about a class is kept between picks: after any number of cold requests of a class (a low hit
        // rate), the first one whose prompt a holder has goes there; no class policy in Redis, none needed.
        for (int i = 0; i < 20; i++) {
            long[] cold = new CanonicalBlockHasher(16).chain("m", null, IntStream.range(2_000 + 64 * i, 2_064 + 64 * i).toArray(), List.of());
            assertThat(pick(router, cold, "long-prefix").reason()).isEqualTo("COLD");
        }
        holdWholePrompt("e2");
        assertThat(pick(router, chain, "long-prefix")).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e2", 4, "AFFINITY");
        assertThat(redis.exists(layout.classesKey())).isZero();
    }

    @Test
    void anOperatorCanStillTurnAClassOffByHandItIsPlacedOnLoadAloneAndStillSaysWhatAffinityWouldMatch() {
        hold(1, "e1");
        hold(2, "e1");
        redis.hset(layout.classesKey(), Map.of("batch", "off", "chat", "on"));
        assertThat(pick(router, chain, "batch")).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason, Pick::bestHolderBlocks)
                .containsExactly("e3", 0, "NO_AFFINITY_CLASS", 2);
        assertThat(pick(router, chain, "chat")).extracting(Pick::engineId, Pick::reason).containsExactly("e1", "AFFINITY");
        assertThat(pick(router, chain, "never-seen")).extracting(Pick::engineId, Pick::reason).containsExactly("e1", "AFFINITY");
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e1", "AFFINITY");
    }

    @Test
    void withThePrefillRateKnownAClassTurnedOffByHandGoesWhereItStartsSoonestAsIfNobodyHeldIt() {
        // 16 tokens/s: the 4-block prompt is 4 s of prefill where it is not cached. e1 holds half of it.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16"));
        hold(1, "e1");
        hold(2, "e1");
        redis.hset(layout.classesKey(), Map.of("batch", "off"));
        // e3 carries the fewest requests but prefills at 4 tokens/s: 4 × 4 s there.
        learnedRate("e3", 0, 4);
        assertThat(pick(router, chain, "batch")).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason, Pick::bestHolderBlocks)
                .as("e1 and e2 cost the same; e1 has the fewer requests").containsExactly("e1", 0, "NO_AFFINITY_CLASS", 2);
        // The next one: e1 has that prompt's 4 s queued now (it was placed as uncached).
        assertThat(pick(router, chain, "batch")).extracting(Pick::engineId, Pick::reason).containsExactly("e2", "NO_AFFINITY_CLASS");
    }

    @Test
    void aClientsBurstIsSpreadOnceOneEngineHoldsMoreThanItsShare() {
        redis.hset(layout.metaKey(), Map.of("client_cap", "0.5", "client_min_inflight", "4"));
        hold(1, "e1", "e2");
        hold(2, "e1", "e2");
        hold(3, "e1");
        redis.hset(layout.clientReservationsKey("burst"), "e1", "4");
        redis.hset(layout.clientReservationsKey("calm"), "e1", "1");
        // burst: 5 of 5 in flight on e1 would exceed half: the next holder takes it
        assertThat(pick(router, chain, null, "burst")).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e2", 2, "REPLICA");
        // calm: 2 in flight is under the 4 from which the cap applies
        assertThat(pick(router, chain, null, "calm")).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e1", 3, "AFFINITY");
        redis.hset(layout.clientReservationsKey("burst"), Map.of("e1", "3", "e2", "3"));
        // 4 of 7 on e1 and 4 of 7 on e2 both exceed half: the least-loaded engine under the cap
        assertThat(pick(router, chain, null, "burst")).extracting(Pick::engineId, Pick::reason)
                .containsExactly("e3", "SPILL_CLIENT_CAP");
    }

    @Test
    void aClientsBurstCopiesItsPromptToASpareEngineBeforeItsHoldersFill() {
        // 16 tokens/s: the 4-block prompt is 4 s of prefill. Every engine has 4 slots. e1 holds the
        // prompt; the client "burst" has 4 requests in flight there, the minimum from which it is a burst.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16", "client_cap", "1", "client_min_inflight", "4"));
        redis.hset(layout.clientReservationsKey("burst"), "e1", "4");
        holdWholePrompt("e1");
        running("e1", 1);
        running("e2", 3);
        running("e3", 0);
        assertThat(pick(router, chain, null, "burst")).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .as("2 of e1's 4 slots taken with this one: it stays").containsExactly("e1", 4, "AFFINITY");
        running("e1", 3);
        assertThat(pick(router, chain, null, "calm")).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .as("one request of another client is no burst: the free slot on the holder").containsExactly("e1", 4, "AFFINITY");
        running("e1", 3);
        // The 4th of e1's 4 slots: the burst's next request computes a copy on e3 (every slot free;
        // e2 has 1 of 4), ready when e1 is full.
        assertThat(pick(router, chain, null, "burst")).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e3", 0, "BURST_COPY");
        // While e3 computes it (4 s), no second copy: the holder's last slot.
        assertThat(pick(router, chain, null, "burst")).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e1", 4, "AFFINITY");
    }

    @Test
    void whileNoEnginesSlotsAreKnownABurstCopiesItsPromptOnceItsHoldersCarryTwiceASparesLoad() {
        // A fleet's first seconds: no engine has queued, so no slots are known. 16 tokens/s, e1 holds
        // the prompt; the client "burst" has 4 requests in flight, the minimum from which it is a burst.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16", "client_cap", "1", "client_min_inflight", "4"));
        redis.hset(layout.clientReservationsKey("burst"), "e1", "4");
        holdWholePrompt("e1");
        engine("e1", "READY", 0, 1);
        engine("e2", "READY", 2, 1);
        engine("e3", "READY", 0, 1);
        assertThat(pick(router, chain, null, "burst")).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .as("e1 with this one: 1 request, not 2 x e3's (0 + 1)").containsExactly("e1", 4, "AFFINITY");
        engine("e1", "READY", 1, 1);
        assertThat(pick(router, chain, null, "calm")).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .as("another client's request is no burst").containsExactly("e1", 4, "AFFINITY");
        assertThat(pick(router, chain, null, "burst")).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .as("e1 carries twice what e3 would: a copy on e3, the lighter spare").containsExactly("e3", 0, "BURST_COPY");
        assertThat(pick(router, chain, null, "burst")).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .as("while e3 computes it, no second copy (e2 is a spare too)").containsExactly("e1", 4, "AFFINITY");
    }

    @Test
    void twoBalancersSeeEachOthersReservationsOnTheirNextPick(StackAddresses stack) {
        // No holder: load alone. Reported loads e1 1, e2 2, e3 0.
        try (KvRouterClient other = new KvRouterClient(options(stack.redisUrl()))) {
            assertThat(pick(router, chain).engineId()).isEqualTo("e3");
            assertThat(pick(other, chain).engineId()).as("e3 has this balancer's reservation: 1 + 1 against e1's 1").isEqualTo("e1");
            assertThat(pick(router, chain).engineId()).as("and the other's on e1: e1 2, e2 2, e3 1").isEqualTo("e3");
            assertThat(pick(other, chain).engineId()).isEqualTo("e1");
            assertThat(pick(router, chain).engineId()).as("e1 3, e2 2, e3 2: the lower id of the two").isEqualTo("e2");
        }
    }

    @Test
    void aClientsBurstIsSpreadFromItsReservationsAloneWithNoJobRunning() {
        // No job writes this view: only the balancers' reservations know the client's requests in flight.
        redis.hset(layout.metaKey(), Map.of("client_cap", "0.5", "client_min_inflight", "4"));
        hold(1, "e1");
        hold(2, "e1");
        engine("e1", "READY", 2, 1);
        engine("e2", "READY", 2, 1);
        engine("e3", "READY", 2, 1);
        Map<String, Integer> placed = new java.util.TreeMap<>();
        List<String> reasons = new java.util.ArrayList<>();
        for (int i = 0; i < 12; i++) {
            Pick p = pick(router, chain, null, "burst");
            placed.merge(p.engineId(), 1, Integer::sum);
            reasons.add(p.reason());
        }
        // Under the minimum the holder takes them (3 on e1); from the 4th on no engine may hold more
        // than half of the client's reservations, this one included.
        assertThat(reasons.subList(0, 3)).containsOnly("AFFINITY");
        assertThat(reasons).contains("SPILL_CLIENT_CAP");
        assertThat(placed.get("e1")).as("at most half of 12 on the holder").isLessThanOrEqualTo(6);
        assertThat(placed).as("spread over the fleet").hasSize(3);
        assertThat(redis.hgetall(layout.clientReservationsKey("burst"))).as("the client's live reservations per engine")
                .isEqualTo(placed.entrySet().stream().collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, e -> e.getValue().toString())));
    }

    @Test
    void whileEveryEngineIsFullAHoldingBalancersRequestsWaitAndTakeTheSlotsFreedInTheOrderTheyCame(StackAddresses stack)
            throws InterruptedException {
        everyEngineFull();
        try (KvRouterClient a = new KvRouterClient(holdingFor(stack, Duration.ofSeconds(30)));
             KvRouterClient b = new KvRouterClient(holdingFor(stack, Duration.ofSeconds(30)))) {
            Pick first = placeUnder(a, "r1");
            assertThat(first).extracting(Pick::held, Pick::engineId, Pick::reason, Pick::source, Pick::requestId)
                    .containsExactly(true, "", "HOLD", Source.VIEW, null);
            assertThat(redis.hget(layout.reservationsKey(), a.reservationId("r1"))).as("a held request reserves nothing").isNull();
            Thread.sleep(2); // held in a later millisecond: requests first held in the same one have no order
            assertThat(placeUnder(b, "r2").held()).as("another balancer's request waits too").isTrue();
            assertThat(redis.zrange(layout.heldRequestsKey(), 0, -1)).containsExactly(a.reservationId("r1"), b.reservationId("r2"));
            assertThat(pick(router, chain).held()).as("a balancer that does not hold places as before").isFalse();

            // e2 reports a slot free: r1 came first, so r2 still waits, whoever asks first.
            running("e2", 3);
            Thread.sleep(2); // placements after the report, which counts only what came before
            assertThat(placeUnder(b, "r2").held()).isTrue();
            assertThat(placeUnder(a, "r1")).extracting(Pick::held, Pick::engineId, Pick::requestId).containsExactly(false, "e2", "r1");
            assertThat(placeUnder(b, "r2").held()).as("r1's reservation took e2's free slot").isTrue();
            running("e3", 3);
            Thread.sleep(2);
            assertThat(placeUnder(b, "r2")).extracting(Pick::held, Pick::engineId).containsExactly(false, "e3");
            assertThat(redis.exists(layout.heldRequestsKey())).as("nobody waits").isZero();
        }
    }

    @Test
    void aHeldRequestGoesInOnceItHasWaitedItsHoldAndLosesItsPlaceWhenItsBalancerFallsSilentOrReportsItDone(StackAddresses stack)
            throws InterruptedException {
        everyEngineFull();
        try (KvRouterClient brief = new KvRouterClient(holdingFor(stack, Duration.ofMillis(300)));
             KvRouterClient patient = new KvRouterClient(holdingFor(stack, Duration.ofSeconds(30)))) {
            assertThat(placeUnder(brief, "r1").held()).isTrue();
            assertThat(redis.pttl(layout.heldRequestsKey())).as("the waiting room expires with the reservations").isPositive();
            assertThat(placeUnder(patient, "r2").held()).isTrue();
            assertThat(placeUnder(patient, "r3").held()).isTrue();
            assertThat(patient.done("r3")).as("a held request has no reservation").isFalse();
            assertThat(redis.zrange(layout.heldRequestsKey(), 0, -1)).as("but leaves the waiting room on done")
                    .containsExactly(brief.reservationId("r1"), patient.reservationId("r2"));
            Thread.sleep(350);
            assertThat(placeUnder(brief, "r1")).as("waited its 300 ms: placed though every engine is full")
                    .extracting(Pick::held, Pick::requestId).containsExactly(false, "r1");
            // r2's balancer stops asking; a slot frees, r4 waits behind r2 until r2 has been silent a second.
            running("e1", 3);
            Thread.sleep(2);
            assertThat(placeUnder(patient, "r4").held()).isTrue();
            Thread.sleep(600);
            assertThat(placeUnder(patient, "r4").held()).as("r2 last asked 0.95 s ago").isTrue();
            Thread.sleep(600);
            assertThat(placeUnder(patient, "r4")).extracting(Pick::held, Pick::engineId).containsExactly(false, "e1");
            assertThat(redis.zrange(layout.heldRequestsKey(), 0, -1)).as("r2 lost its place").isEmpty();
        }
    }

    @Test
    void aBalancerKeepsThePlacesOfTheRequestsItHoldsWithoutAskingForEach(StackAddresses stack) throws InterruptedException {
        everyEngineFull();
        try (KvRouterClient a = new KvRouterClient(holdingFor(stack, Duration.ofSeconds(30)))) {
            assertThat(placeUnder(a, "r1").held()).isTrue();
            Thread.sleep(2); // held in a later millisecond: requests first held in the same one have no order
            assertThat(placeUnder(a, "r2").held()).isTrue();
            Thread.sleep(600);
            assertThat(a.holding(List.of("r1", "r2", "never-held"))).isEqualTo(2);
            Thread.sleep(600); // 1.2 s since either was asked for: kept, not gone
            running("e1", 3);
            Thread.sleep(2);
            assertThat(placeUnder(a, "r2").held()).as("r1 kept its place ahead").isTrue();
            assertThat(placeUnder(a, "r1")).extracting(Pick::held, Pick::engineId).containsExactly(false, "e1");
            assertThat(a.holding(List.of("r1", "r2"))).as("r1 placed, out of the waiting room").isEqualTo(1);
        }
    }

    @Test
    void aStaleViewHoldsNothing(StackAddresses stack) {
        everyEngineFull();
        redis.hset(layout.metaKey(), "updated_ms", Long.toString(now - 60_000));
        try (KvRouterClient holding = new KvRouterClient(holdingFor(stack, Duration.ofSeconds(30)))) {
            assertThat(placeUnder(holding, "r1")).extracting(Pick::held, Pick::reason).containsExactly(false, "FALLBACK_LOAD_ONLY");
        }
    }

    @Test
    void withEveryEngineSuspectOrBusyNothingIsHeldForNoSlotOfTheirsWouldBeCountedFree(StackAddresses stack) {
        // Every engine silent for a while (SUSPECT: a stall upstream of the job, or the fleet's trouble), slots free:
        // a free slot there is never counted, so a held request would wait its whole hold for nothing.
        for (String id : List.of("e1", "e2", "e3")) {
            redis.hset(layout.enginesKey(), id, new EngineEntry("SUSPECT", 0, 1, 500, TAU, 1, false, System.currentTimeMillis(),
                    EngineEntry.BOTH, 4, 0, 4_000).encode());
        }
        try (KvRouterClient holding = new KvRouterClient(holdingFor(stack, Duration.ofSeconds(30)))) {
            Pick p = placeUnder(holding, "r1");
            assertThat(p.held()).isFalse();
            assertThat(p.engineId()).isNotEmpty();
        }
        // One engine READY and full beside them: its slot is worth waiting for.
        running("e1", 4);
        try (KvRouterClient holding = new KvRouterClient(holdingFor(stack, Duration.ofSeconds(30)))) {
            assertThat(placeUnder(holding, "r2").held()).isTrue();
        }
    }

    /** Every engine's 4 slots taken. */
    private void everyEngineFull() {
        running("e1", 4);
        running("e2", 4);
        running("e3", 4);
    }

    /** A pick of the prompt under a request id (reserving), as a balancer sending the request makes it. */
    private Pick placeUnder(KvRouterClient client, String requestId) {
        if (clientSide()) {
            client.refresh();
        }
        return client.pick(chain, null, null, requestId);
    }

    @Test
    void aReservationLeavesTheLoadOnACoveringLoadReportAndEverythingOnDone() {
        Pick first = pick(router, chain, null, "c1");
        assertThat(first.engineId()).isEqualTo("e3");
        assertThat(first.requestId()).isNotNull();
        assertThat(redis.hget(layout.reservationsKey(), router.reservationId(first.requestId()))).startsWith("e3|").endsWith("|c1");
        assertThat(pick(router, chain).engineId()).as("e3 counts the reservation: 1, against e1's 1 (id)").isEqualTo("e1");

        // e3 reports after the pick, with the request in its queue: the report covers it.
        long later = System.currentTimeMillis() + 1;
        redis.hset(layout.enginesKey(), "e3", new EngineEntry("READY", 0, 0, 500, TAU, 1, false, later).encode());
        assertThat(pick(router, chain).engineId()).as("e3's own figure (0) is the whole load now; e1 has a reservation")
                .isEqualTo("e3");
        assertThat(redis.hget(layout.clientReservationsKey("c1"), "e3")).as("covered load still counts for the client cap")
                .isEqualTo("1");

        assertThat(router.done(first.requestId())).isTrue();
        assertThat(redis.hget(layout.reservationsKey(), router.reservationId(first.requestId()))).isNull();
        assertThat(redis.exists(layout.clientReservationsKey("c1"))).isZero();
        assertThat(redis.zscore(layout.engineReservationsKey("e3"), router.reservationId(first.requestId()))).isNull();
        assertThat(router.done(first.requestId())).as("done twice releases once").isFalse();
    }

    @Test
    void aRequestDoneAfterTheLoadReportThatCountedItIsOneLessUntilTheNextReport(StackAddresses stack) throws InterruptedException {
        try (KvRouterClient observer = new KvRouterClient(options(stack.redisUrl()).observing())) {
            Pick first = pick(router, chain, null, "c1");
            assertThat(first.engineId()).isEqualTo("e3");
            // e3 reports the request in its queue: 1, as e1. (Milliseconds apart, so the report, the done
            // and the next report have distinct times.)
            Thread.sleep(2);
            redis.hset(layout.enginesKey(), "e3", new EngineEntry("READY", 1, 0, 500, TAU, 1, false, System.currentTimeMillis()).encode());
            assertThat(pick(observer, chain).engineId()).as("e1 1, e2 2, e3 1: the lower id").isEqualTo("e1");
            Thread.sleep(2);
            assertThat(router.done(first.requestId())).isTrue();
            assertThat(pick(observer, chain).engineId()).as("the report still counts the finished request: e3 0").isEqualTo("e3");
            // The next report no longer counts it (a new request is waiting): nothing is taken off twice.
            Thread.sleep(2);
            redis.hset(layout.enginesKey(), "e3", new EngineEntry("READY", 1, 0, 500, TAU, 1, false, System.currentTimeMillis()).encode());
            assertThat(pick(observer, chain).engineId()).as("e3 1 again, as reported").isEqualTo("e1");
        }
    }

    @Test
    void aReservationCountedByEarlierPicksStopsCountingOnceItsKeyExpires(StackAddresses stack) throws InterruptedException {
        // The functions keep each engine's count of reservations between calls (the library's
        // kept_counts); a count kept from before the engine's reservation key expired would still
        // count the expired reservation. The kept counts are claimed first by a call that outlives the
        // reservation (kvr_done's claim lasts the view's reservation TTL, here still the default 60 s),
        // so only the key's own expiry ends it.
        assertThat(router.done("never-placed")).isFalse();
        assertThat(redis.pttl(layout.reservationsKey() + ":kept-by")).isGreaterThan(50_000L);
        redis.hset(layout.metaKey(), "reservation_ttl_ms", "3000");
        try (KvRouterClient observer = new KvRouterClient(options(stack.redisUrl()).observing())) {
            assertThat(pick(router, chain, null, "c1").engineId()).isEqualTo("e3");
            assertThat(pick(observer, chain).engineId()).as("e1 1, e2 2, e3 1 (reserved): the lower id").isEqualTo("e1");
            assertThat(pick(observer, chain).engineId()).as("again, from the kept count").isEqualTo("e1");
            Thread.sleep(3_100);
            redis.hset(layout.metaKey(), "updated_ms", Long.toString(System.currentTimeMillis()));
            assertThat(redis.exists(layout.engineReservationsKey("e3"))).as("expired").isZero();
            assertThat(pick(observer, chain).engineId()).as("the expired reservation no longer counts on e3").isEqualTo("e3");
        }
    }

    @Test
    void kvrDoneClaimsTheKeptCountsForTheViewsReservationTtl() {
        // What the functions keep between calls lives as long as a reservation (kept-by's expiry): the
        // view's reservation_ttl_ms, for kvr_done as for a placement.
        redis.hset(layout.metaKey(), "reservation_ttl_ms", "4000");
        assertThat(router.done("never-placed")).isFalse();
        assertThat(redis.pttl(layout.reservationsKey() + ":kept-by")).isBetween(1L, 4_000L);
    }

    @Test
    void aReservationNeverReportedDoneExpiresAndEveryKeyHasATtl() throws InterruptedException {
        redis.hset(layout.metaKey(), "reservation_ttl_ms", "1000");
        Pick forgotten = pick(router, chain, null, "c1");
        assertThat(redis.pttl(layout.reservationsKey())).isBetween(1L, 1000L);
        assertThat(redis.pttl(layout.engineReservationsKey(forgotten.engineId()))).isBetween(1L, 1000L);
        assertThat(redis.pttl(layout.clientReservationsKey("c1"))).isBetween(1L, 1000L);
        Thread.sleep(1_100);
        engine("e3", "READY", 0, 1); // the engine table as before, loads reported long ago
        Pick next = pick(router, chain, null, "c2"); // every placement sweeps what expired
        assertThat(redis.hget(layout.reservationsKey(), router.reservationId(forgotten.requestId()))).isNull();
        assertThat(redis.hgetall(layout.clientReservationsKey("c1"))).isEmpty();
        assertThat(next.engineId()).as("the expired reservation no longer counts on e3").isEqualTo("e3");
    }

    @Test
    void theCostViewPricesAHitATransferAndACold() {
        // Llama-3-8B-like KV: 131 072 bytes per token; 10 000 prefill tokens/s; 25 GB/s; $3 per million input tokens
        redis.hset(layout.metaKey(), Map.of("chunk_tokens", "16", "kv_bytes_per_token", "131072",
                "prefill_tokens_per_s", "10000", "fabric_bytes_per_s", "25000000000", "usd_per_million_input", "3.0"));
        hold(1, "e1", "e2");
        hold(2, "e1", "e2");
        hold(3, "e1");
        hold(4, "e1");
        // 4 blocks of 16 tokens: 64 tokens not recomputed, 6.4 ms of prefill, $0.000192
        assertThat(pick(router, chain).saving()).isEqualTo(new PickPolicy.Saving("HIT", 64, 0.000192, 6.4));
        engine("e1", "BUSY", 1, 1);
        engine("e2", "BUSY", 2, 1);
        // Both holders busy: e3 takes it; moving e1's 64 tokens (8 MiB at 25 GB/s, 0.34 ms) beats 6.4 ms of prefill
        Pick moved = pick(router, chain);
        assertThat(moved).extracting(Pick::engineId, Pick::reason).containsExactly("e3", "SPILL_UNAVAILABLE");
        assertThat(moved.saving()).isEqualTo(new PickPolicy.Saving("TRANSFER", 64, 0.000192, 6.1));
        // At 1 MB/s moving takes 8.4 s: recomputing is cheaper, a cold start (e3 is no holder: the
        // placement just made there is forgotten, else it would hold the prompt once its prefill is done)
        redis.hset(layout.metaKey(), "fabric_bytes_per_s", "1000000");
        redis.del(layout.pendingKey());
        assertThat(pick(router, chain).saving()).isEqualTo(PickPolicy.Saving.NONE);
    }

    @Test
    void aPrefixHeldByReplicasGoesToTheLeastLoadedOfThem() {
        hold(1, "e1", "e2");
        hold(2, "e1", "e2");
        hold(3, "e1", "e2");
        engine("e1", "READY", 3, 1);
        engine("e2", "READY", 1, 1);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason).containsExactly("e2", 3, "AFFINITY");
        engine("e2", "READY", 4, 1);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason).containsExactly("e1", 3, "AFFINITY");
        // A replica with fewer blocks is not a replica of the longest prefix: the longer match wins.
        hold(4, "e2");
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks).containsExactly("e2", 4);
    }

    @Test
    void disaggregatedServingPlacesPromptsOnThePrefillPoolAndPricesTheHandOffToTheLeastLoadedDecodeEngine() {
        redis.hset(layout.metaKey(), Map.of("chunk_tokens", "16", "kv_bytes_per_token", "131072",
                "prefill_tokens_per_s", "10000", "fabric_bytes_per_s", "25000000000"));
        assertThat(pick(router, chain).handoff()).as("no decode pool: no hand-off").isEqualTo(PickPolicy.Handoff.NONE);
        redis.del(layout.pendingKey()); // that placement is not what this case is about
        engine("d1", "READY", 5, 1, "DECODE");
        engine("d2", "READY", 2, 1, "DECODE");
        engine("d3", "BUSY", 0, 1, "DECODE");
        engine("d4", "READY", 0, 1, "DECODE");
        hold(1, "e1", "d4"); // a decode engine's cache is not for prompts
        hold(2, "e1", "d4");
        engine("e1", "READY", 2, 1, "PREFILL");
        engine("e2", "READY", 1, 1, "PREFILL");
        engine("e3", "READY", 2, 1); // a unified engine takes prompts too
        Pick p = pick(router, chain);
        assertThat(p).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason).containsExactly("e1", 2, "AFFINITY");
        // All 4 prompt blocks (64 tokens x 128 KiB = 8 MiB) move to d4 at 25 GB/s: 0.34 ms on the TTFT path,
        // whatever the cache saved (2 blocks, 3.2 ms of prefill). d3 has less load but is busy; d4 is the least loaded.
        assertThat(p.handoff()).isEqualTo(new PickPolicy.Handoff("d4", 0.3));
        assertThat(p.saving()).isEqualTo(new PickPolicy.Saving("HIT", 32, 0, 3.2));
        // The decode pool's own mean, 7 / 4 = 1.75: d1 (5) is over 2 x 1.75, d2 (2) is fine.
        engine("d4", "DRAINING", 0, 1, "DECODE");
        assertThat(pick(router, chain).handoff().decodeEngineId()).isEqualTo("d2");
        // One block: 16 tokens, 2 MiB, 0.08 ms.
        assertThat(pick(router, new long[] {1})).as("a cold prompt goes to the least loaded prefill engine")
                .extracting(Pick::engineId, p2 -> p2.handoff().ms()).containsExactly("e2", 0.1);
    }

    @Test
    void anOlderButValidCopyOfTheSamePrefixIsAReplicaAndTheLessLoadedOneWins() {
        // e2 stored the prefix 2 minutes earlier: confidence exp(-120/600) = 0.82 against e1's 1.0,
        // but the same run of 3 blocks; a confident-but-busier holder must not pin the prefix.
        for (int position = 1; position <= 3; position++) {
            redis.hset(layout.groupKey(ViewLayout.tag(chain, position, 2)), ViewLayout.hex(chain[position - 1]),
                    ViewLayout.holder("e1", now, 1) + "," + ViewLayout.holder("e2", now - 120_000, 1));
        }
        engine("e1", "READY", 3, 1);
        engine("e2", "READY", 1, 1);
        Pick p = pick(router, chain);
        assertThat(p).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason).containsExactly("e2", 3, "AFFINITY");
        assertThat(p.confidence()).isCloseTo(Math.exp(-0.2), org.assertj.core.data.Offset.offset(0.01));
        engine("e2", "READY", 3, 1);
        assertThat(pick(router, chain).engineId()).as("equal load: the more confident").isEqualTo("e1");
    }

    @Test
    void aPlacementIsHeldThereOnceItsPrefillIsDoneBeforeTheEngineReportsIt() throws InterruptedException {
        // 64 tokens/s: the 4-block (64-token) prompt is a second of prefill. The view holds nothing.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "64"));
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e3", "COLD");
        // e3 is still computing it: a copy sent there would compute it again behind the first. Elsewhere, cold.
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason).containsExactly("e1", 0, "COLD");
        Thread.sleep(1_100);
        // Both prefills are done: e3 and e1 hold the prompt for every balancer, though no BlockStored
        // reached the view. Loads e1 2, e3 1: the less loaded holder.
        Pick third = pick(router, chain);
        assertThat(third).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason, Pick::confidence)
                .containsExactly("e3", 4, "AFFINITY", 1.0);
        // A prompt sharing the first 2 of 4 blocks: found at the sampled positions 1, 2 and 4 (not 4).
        long[] sibling = new CanonicalBlockHasher(16).chain("m", null,
                IntStream.concat(IntStream.range(0, 32), IntStream.range(1_000, 1_032)).toArray(), List.of());
        assertThat(sibling[1]).isEqualTo(chain[1]);
        assertThat(sibling[2]).isNotEqualTo(chain[2]);
        assertThat(pick(router, sibling)).as("loads e1 2, e3 2: the lower id").extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e1", 2, "AFFINITY");
        // e1 restarted (epoch 2) and lost its cache: what was placed there before counts no more,
        // although e1 is now the least loaded.
        engine("e1", "READY", 0, 2);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason).containsExactly("e3", 4, "AFFINITY");
    }

    @Test
    void aPlacementOnAHolderKeepsWhatItHeldReadyOnlyTheBlocksItBringsWaitForItsPrefill() throws InterruptedException {
        // 640 tokens/s: 4 blocks (64 tokens) are 100 ms of prefill. The view holds nothing.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "640"));
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e3", "COLD");
        Thread.sleep(150);
        // e3 holds the 4 blocks now. A prompt of 8 blocks starting with them brings 4 more: 100 ms on e3.
        long[] longer = new CanonicalBlockHasher(16).chain("m", null, IntStream.range(0, 128).toArray(), List.of());
        assertThat(pick(router, longer)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e3", 4, "AFFINITY");
        // Meanwhile e3 still holds the first 4: the 4-block prompt goes there (100 ms of queued prefill
        // against 300 ms cold elsewhere), not cold to e1 as if e3 were computing them again.
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e3", 4, "AFFINITY");
    }

    @Test
    void anEngineComputingAPromptHoldsItWhenTheFirstCopyIsDoneThoughASecondFollowsIt() throws InterruptedException {
        // 640 tokens/s: the 4-block prompt is 100 ms of prefill. e3 is the only live engine, so a second
        // request for the prompt goes there while the first copy is computed, and queues behind it.
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "640"));
        engine("e1", "DEAD", 0, 1);
        engine("e2", "DEAD", 0, 1);
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e3", "COLD");
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e3", "COLD");
        Thread.sleep(150);
        // The first copy is done at 100 ms (the second at 200): e3 holds the prompt now.
        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e3", 4, "AFFINITY");
    }

    @Test
    void anObserverSeesPendingPrefixesAndRecordsNone(StackAddresses stack) throws InterruptedException {
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "64000")); // the prompt is a millisecond of prefill
        try (KvRouterClient observer = new KvRouterClient(options(stack.redisUrl()).observing())) {
            pick(observer, chain);
            assertThat(redis.exists(layout.pendingKey())).as("asking places nothing").isZero();
            assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e3", "COLD");
            Thread.sleep(20);
            assertThat(pick(observer, chain)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                    .containsExactly("e3", 4, "AFFINITY");
        }
    }

    @Test
    void aPendingBlockKeepsItsLatestHoldersLatestFirstTheOthersAsWritten() {
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "64000")); // the prompt is a millisecond of prefill
        // Position 1 of the prompt is pending on nine other engines, latest first, and on one expired:
        // x1 still computing it (ready in 2 s), x2 … x9 ready 0.2 … 0.9 s ago, x0 ready 6 s ago.
        long at = System.currentTimeMillis();
        List<String> others = new ArrayList<>();
        others.add(ViewLayout.holder("x1", at + 2_000, 1));
        for (int k = 2; k <= 9; k++) {
            others.add(ViewLayout.holder("x" + k, at - 100L * k, 7));
        }
        others.add(ViewLayout.holder("x0", at - 6_000, 1));
        redis.hset(layout.pendingKey(), ViewLayout.hex(chain[0]), String.join(",", others));

        assertThat(pick(router, chain)).extracting(Pick::engineId, Pick::reason).containsExactly("e3", "COLD");
        // e3 is ready in about a millisecond: after x1, before x2. Eight holders at most: x8, x9 and the
        // expired x0 leave; the others' entries stay exactly as they were written.
        List<String> kept = List.of(redis.hget(layout.pendingKey(), ViewLayout.hex(chain[0])).split(","));
        assertThat(kept).hasSize(8);
        assertThat(kept.get(0)).isEqualTo(others.get(0));
        assertThat(kept.get(1)).startsWith("e3=").endsWith(".1");
        long e3Ready = Long.parseLong(kept.get(1).substring(3, kept.get(1).indexOf('.')), 36);
        assertThat(e3Ready).isBetween(at, System.currentTimeMillis() + 100);
        assertThat(kept.subList(2, 8)).isEqualTo(others.subList(1, 7));
        assertThat(redis.zscore(layout.pendingKey() + ":by-time", ViewLayout.hex(chain[0])))
                .as("swept 5 s after its latest holder (x1) is ready").isEqualTo(at + 2_000 + 5_000.0);
    }

    @Test
    void pendingPrefixesExpireAndStayBounded() {
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "64000"));
        pick(router, chain);
        assertThat(redis.hkeys(layout.pendingKey())).as("positions 1, 2 and 4 of 4")
                .containsExactlyInAnyOrder(ViewLayout.hex(chain[0]), ViewLayout.hex(chain[1]), ViewLayout.hex(chain[3]));
        assertThat(redis.pttl(layout.pendingKey())).isBetween(1L, 5_100L);
        assertThat(redis.pttl(layout.pendingKey() + ":by-time")).isBetween(1L, 5_100L);
        assertThat(redis.zscore(layout.pendingKey() + ":by-time", ViewLayout.hex(chain[0])))
                .as("swept 5 s after the engine holds it").isBetween(now + 5_000.0, System.currentTimeMillis() + 5_100.0);

        // A holder ready more than 5 s ago counts no more: e1 (the least loaded) was, e2 is still pending.
        long[] other = {11, 12, 13, 14};
        long at = System.currentTimeMillis();
        redis.hset(layout.pendingKey(), ViewLayout.hex(other[3]),
                ViewLayout.holder("e1", at - 6_000, 1) + "," + ViewLayout.holder("e2", at - 100, 1));
        assertThat(pick(router, other)).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason).containsExactly("e2", 4, "AFFINITY");

        // Thousands of distinct prompts placed: the hash keeps 8 192 block hashes at most. (At 16 tokens/s
        // every placement queues a second more prefill: none is ready, let alone expired, during the loop.)
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "16"));
        for (long i = 0; i < 8_300; i++) {
            router.pick(new long[] {1_000_000 + i});
        }
        assertThat(redis.hlen(layout.pendingKey())).isEqualTo(8_192L);
        assertThat(redis.zcard(layout.pendingKey() + ":by-time")).isEqualTo(redis.hlen(layout.pendingKey()));
    }

    @Test
    void anEngineTheBalancerCouldNotReachIsLeftOutOfItsRetryAndTheReservationMoves() {
        hold(1, "e1", "e2");
        hold(2, "e1", "e2");
        engine("e1", "READY", 0, 1);
        Pick first = pick(router, chain, null, "c1");
        assertThat(first).extracting(Pick::engineId, Pick::reason).containsExactly("e1", "AFFINITY");
        // e1 refuses the connection (it died a moment ago; the view does not know yet): ask again without it.
        if (clientSide()) {
            router.refresh();
        }
        Pick retry = router.pick(chain, null, "c1", first.requestId(), java.util.Set.of("e1"));
        assertThat(retry).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason, Pick::requestId)
                .containsExactly("e2", 2, "AFFINITY", first.requestId());
        assertThat(redis.hget(layout.reservationsKey(), router.reservationId(first.requestId()))).startsWith("e2|");
        assertThat(redis.zscore(layout.engineReservationsKey("e1"), router.reservationId(first.requestId()))).isNull();
        assertThat(redis.hgetall(layout.clientReservationsKey("c1"))).isEqualTo(Map.of("e2", "1"));
        // Neither holder reachable: the least loaded of the rest, cold.
        assertThat(router.pick(chain, null, "c1", first.requestId(), java.util.Set.of("e1", "e2")))
                .extracting(Pick::engineId, Pick::reason).containsExactly("e3", "COLD");
    }

    @Test
    void aWarmUpAnswersFromTheViewAndReservesNothing() {
        redis.hset(layout.metaKey(), Map.of("prefill_tokens_per_s", "64000"));
        assertThat(router.warmUp(50)).isEqualTo(50);
        assertThat(redis.exists(layout.reservationsKey(), layout.pendingKey(), layout.reservationsKey() + ":prefill")).isZero();
        redis.del(layout.metaKey());
        assertThat(router.warmUp(5)).as("no view yet: not ready").isZero();
    }

    @Test
    void anUnknownPromptIsColdOnTheLeastLoadedEngine() {
        assertThat(pick(router, new long[] {1, 2, 3})).extracting(Pick::engineId, Pick::matchedBlocks, Pick::reason)
                .containsExactly("e3", 0, "COLD");
        assertThat(pick(router, new long[0]).reason()).isEqualTo("COLD");
    }

    private void freshMeta() {
        redis.hset(layout.metaKey(), Map.of("updated_ms", Long.toString(now), "busy_factor", "2.0",
                "confidence_floor", "0.05", "layout", "1"));
    }

    private void engine(String id, String status, int load, long epoch) {
        engine(id, status, load, epoch, EngineEntry.BOTH);
    }

    private void engine(String id, String status, int load, long epoch, String role) {
        redis.hset(layout.enginesKey(), id, new EngineEntry(status, load, 0, 500, TAU, epoch, false, now, role).encode());
    }

    private void learnedRate(String id, int load, int prefillTokensPerS) {
        redis.hset(layout.enginesKey(), id, new EngineEntry("READY", load, 0, 500, TAU, 1, false, now, EngineEntry.BOTH, 0,
                prefillTokensPerS, 0).encode());
    }

    /** Every block of {@code chain} held by the engines, stored now, epoch 1. */
    private void holdWholePrompt(String... engines) {
        for (int position = 1; position <= chain.length; position++) {
            hold(position, engines);
        }
    }

    /** Block at 1-based position held by engines stored now, epoch 1. */
    private void hold(int position, String... engines) {
        String value = String.join(",", java.util.Arrays.stream(engines).map(e -> ViewLayout.holder(e, now, 1)).toList());
        redis.hset(layout.groupKey(ViewLayout.tag(chain, position, 2)), ViewLayout.hex(chain[position - 1]), value);
    }
}
