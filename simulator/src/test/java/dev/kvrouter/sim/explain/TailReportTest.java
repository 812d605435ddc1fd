package dev.kvrouter.sim.explain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvrouter.events.EngineLoad;
import dev.kvrouter.events.OutcomeStatus;
import dev.kvrouter.events.RequestOutcome;
import dev.kvrouter.events.RouteReason;
import dev.kvrouter.events.RoutingDecision;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class TailReportTest {

    private static RoutingDecision decision(int i, String prefixClass, RouteReason reason, String engine) {
        return RoutingDecision.newBuilder().setRequestId("r" + i).setClientId("c" + (i % 3)).setPrefixClass(prefixClass)
                .setEngineId(engine).setPredictedCachedBlocks(2).setReason(reason).setTsMs(1_000_000 + i * 100L).build();
    }

    private static RequestOutcome outcome(int i, String engine, double ttftMs) {
        return RequestOutcome.newBuilder().setRequestId("r" + i).setEngineId(engine).setPromptTokens(512).setCachedTokens(256)
                .setQueueMs(ttftMs / 2).setTtftMs(ttftMs).setOutputTokens(8).setStatus(OutcomeStatus.OK).setTsMs(1_000_000 + i * 100L + 50)
                .build();
    }

    /**
     * 200 requests with TTFT 1..200 ms; the two slowest are spills to engine e9 of class burst, on the prefill queued on
     * the holder (SPILL_BUSY, in detail SPILL_QUEUE); r200 never finished.
     */
    private static List<TailReport.Request> run() {
        List<RoutingDecision> decisions = new ArrayList<>();
        List<RequestOutcome> outcomes = new ArrayList<>();
        for (int i = 1; i <= 200; i++) {
            boolean slow = i >= 198;
            String engine = slow ? "e9" : "e" + (i % 4);
            RoutingDecision d = decision(i, slow ? "burst" : "chat", slow ? RouteReason.SPILL_BUSY : RouteReason.AFFINITY, engine);
            if (slow) {
                d.setReasonDetail("SPILL_QUEUE");
            }
            decisions.add(d);
            if (i < 200) {
                outcomes.add(outcome(i, engine, i));
            }
        }
        Collections.reverse(decisions); // the join orders by decision time, not by arrival
        return TailReport.join(decisions, outcomes);
    }

    @Test
    void joinsOutcomesToDecisionsInDecisionOrderAndKeepsTheUnfinished() {
        List<TailReport.Request> joined = run();
        assertEquals(200, joined.size());
        assertEquals("r1", joined.get(0).decision().getRequestId());
        assertEquals(1.0, joined.get(0).outcome().getTtftMs());
        assertEquals(null, joined.get(199).outcome());
    }

    @Test
    void theSlowestShareIsBrokenDownByReasonClassAndEngine() {
        String report = TailReport.render(run(), new TailReport.Settings(1, 3, Double.NaN, Double.NaN, null, null));
        assertTrue(report.contains("200 decisions, 199 with an outcome, 1 without"), report);
        // Nearest rank over 199 finished requests: p50 is the 100th (100 ms), p99 the 198th (198 ms).
        assertTrue(report.contains("TTFT p50 100 ms, p99 198 ms, max 199 ms"), report);
        // 1 % of 199 rounds up to 2 requests: r198 and r199, both burst spills to e9.
        assertTrue(report.contains("the slowest 1 % (2 requests, TTFT >= 198 ms)"), report);
        assertTrue(report.contains("by reason: SPILL_QUEUE 2"), report);
        assertTrue(report.contains("by class:  burst 2"), report);
        assertTrue(report.contains("by engine: e9 2"), report);
        assertTrue(report.contains("the 3 slowest:"), report);
    }

    @Test
    void aClassFilterAndAWindowNarrowWhatIsListed() {
        String report = TailReport.render(run(), new TailReport.Settings(50, 0, 19.75, 19.95, "burst", null));
        assertTrue(report.contains("class burst: 2"), report);
        assertTrue(report.contains("every request decided from 19.75 s to 19.95 s:"), report);
        // r198 was decided at 19.7 s after r1, r199 at 19.8 s: only r199 is in the window.
        long listed = report.lines().filter(l -> l.contains("SPILL_QUEUE") && l.contains("e9")).count();
        assertEquals(1, listed, report);
    }

    @Test
    void anEnginesWindowListsItsRequestsAndWhatItReportedMeanwhile() {
        List<EngineLoad> loads = List.of(load("e9", 1_000_100 + 19_700, 3, 8), load("e9", 1_000_100 + 30_000, 0, 1),
                load("e1", 1_000_100 + 19_750, 7, 7));
        String report = TailReport.render(run(), loads, new TailReport.Settings(1, 0, 19, 20, null, "e9"));
        assertTrue(report.contains("e9's load reports from 19 s to 20 s:"), report);
        // The one report of e9 inside the window, none of e1's, none after it.
        assertTrue(report.contains("   19.700        3        8      50.0%"), report);
        assertEquals(1, report.lines().filter(l -> l.matches(" +\\d+\\.\\d{3} +\\d+ +\\d+ +[\\d.]+%")).count(), report);
        // Only e9's requests are listed (r198, r199 at 19.7 and 19.8 s); r190 on e2 is not.
        assertEquals(2, report.lines().filter(l -> l.matches(" +\\d+\\.\\d{3} .*SPILL_QUEUE.*")).count(), report);
        assertTrue(report.lines().noneMatch(l -> l.contains(" e2 ")), report);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new TailReport.Settings(1, 0, Double.NaN, Double.NaN, null, "e9"));
        assertTrue(e.getMessage().contains("--engine"), e.getMessage());
    }

    private static EngineLoad load(String engine, long tsMs, int waiting, int running) {
        return EngineLoad.newBuilder().setEngineId(engine).setModel("m").setTsMs(tsMs).setWaiting(waiting).setRunning(running)
                .setKvBlocksUsed(50).setKvBlocksCapacity(100).build();
    }

    @Test
    void settingsThatMeanNothingAreRefusedWithTheFlagToFix() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new TailReport.Settings(0, 3, Double.NaN, Double.NaN, null, null));
        assertTrue(e.getMessage().contains("--worst"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new TailReport.Settings(1, 3, 5, Double.NaN, null, null));
        assertTrue(e.getMessage().contains("--from and --to"), e.getMessage());
    }

    @Test
    void theCsvHasOneRowPerDecisionAndLeavesAnUnfinishedRequestsOutcomeEmpty() {
        List<String> rows = TailReport.csv(run()).lines().toList();
        assertEquals(201, rows.size());
        assertTrue(rows.get(0).startsWith("request_id,decided_ms,finished_ms,"), rows.get(0));
        assertEquals("r1,1000100,1000150,chat,c1,e1,AFFINITY,2,,,,512,256,0.5,1.0,8,OK", rows.get(1));
        assertTrue(rows.get(200).startsWith("r200,1020000,,burst,c2,e9,SPILL_QUEUE,2,,,,,"), rows.get(200));
        List<TailReport.Request> costed = List.of(new TailReport.Request(costed(decision(1, "chat", RouteReason.AFFINITY, "e1"), 32, 5),
                outcome(1, "e1", 1)));
        assertEquals("r1,1000100,1000150,chat,c1,e1,AFFINITY,2,,32.0,5.0,512,256,0.5,1.0,8,OK", TailReport.csv(costed).lines().toList().get(1));
    }

    private static RoutingDecision costed(RoutingDecision d, double savedMs, double addedWaitMs) {
        d.setSavedPrefillMs(savedMs);
        d.setAddedWaitMs(addedWaitMs);
        return d;
    }

    @Test
    void eachClassShowsWhatItsPlacementsSavedAgainstTheWaitTheyAdded() {
        List<TailReport.Request> requests = new ArrayList<>();
        // chat: two blocks predicted and found (256 tokens cached: 16 blocks), 40 ms saved each, 10 ms of wait added.
        for (int i = 1; i <= 4; i++) {
            requests.add(new TailReport.Request(costed(decision(i, "chat", RouteReason.AFFINITY, "e1"), 40, 10), outcome(i, "e1", 5)));
        }
        // stale: two blocks predicted, none found: nothing saved, 300 ms of wait added.
        for (int i = 5; i <= 6; i++) {
            RequestOutcome nothing = RequestOutcome.newBuilder(outcome(i, "e2", 400)).setCachedTokens(0).build();
            requests.add(new TailReport.Request(costed(decision(i, "stale", RouteReason.AFFINITY, "e2"), 80, 300), nothing));
        }
        // A balancer that sends no cost view: left out of the table.
        requests.add(new TailReport.Request(decision(7, "quiet", RouteReason.COLD, "e3"), outcome(7, "e3", 5)));
        String report = TailReport.render(requests, new TailReport.Settings(1, 10, Double.NaN, Double.NaN, null, null));
        assertTrue(report.matches("(?s).*chat +4 +4 +40\\.0 +10\\.0 +\\+30\\.0\n.*"), report);
        assertTrue(report.matches("(?s).*stale +2 +2 +0\\.0 +300\\.0 +-300\\.0\n.*"), report);
        assertTrue(!report.contains("quiet ") || !report.matches("(?s).*quiet +1 +.*"), report);
        // The slowest requests, one by one, with what their placement saved and added.
        assertTrue(report.matches("(?s).*stale +c\\d +e2 +AFFINITY +2 +- +512 +0 +0ms +300ms .*"), report);
    }

    @Test
    void aRunWithNoDecisionsSaysWhereToLook() {
        String report = TailReport.render(List.of(), new TailReport.Settings(1, 3, Double.NaN, Double.NaN, null, null));
        assertTrue(report.contains("--publish"), report);
    }
}
