-- Choosing (70-choose.lua): the least cost, near ties by run, load and id; the blind choice; load alone.

-- soonest: the least cost among the engines no filter refuses.
local h = head({engines = {e1 = engine(), e2 = engine(), e3 = engine()}, backlog = {e1 = 500, e2 = 100}})
eq(soonest(h, {}), 'e3', 'the least cost')
-- Within SAME_DELAY of the least, the longer run wins, then the lower load, then the id.
h = head({engines = {e1 = engine({load = 1}), e2 = engine(), e3 = engine()}, n = 4})
eq(soonest(h, {}), 'e2', 'equal costs: the lower load, then the id')
h = head({engines = {e1 = engine(), e2 = engine()}, backlog = {e1 = 1}, n = 4})
eq(soonest(h, {e1 = 1}), 'e1', 'a held block saves 4.8 ms: e1 is cheaper')
h = head({engines = {e1 = engine(), e2 = engine()}, backlog = {e1 = 0.1}, n = 100, miss_weight = 0.01})
eq(soonest(h, {e1 = 1}), 'e1', 'within SAME_DELAY of the least: the longer run')
h = head({engines = {e1 = engine({status = 'BUSY'}), e2 = engine({status = 'DRAINING'})}})
eq(soonest(h, {}), nil, 'every engine refused')

-- blind: where it would go with nobody's cache counted.
h = head({engines = {e1 = engine(), e2 = engine({load = 1})}, backlog = {e1 = 100}})
eq(blind(h), 'e2', 'blind: the least cost over the whole prompt')
eq(added_wait(h, 'e1'), 100, 'added_wait: e1 waits 100 ms more than e2')
h.age = 5000
eq(added_wait(h, 'e1'), 0, 'added_wait on a view too old to trust')

-- added_wait without the blind choice: no wait on the chosen engine adds nothing.
h = head({engines = {e1 = engine(), e2 = engine()}, backlog = {e2 = 100}})
eq(added_wait(h, 'e1'), 0, 'added_wait: no wait on e1')
eq(h.blind, nil, 'the blind choice not priced for it')

-- cheapest_by_bound: a holder no engine can cost less than spares soonest's pass, and only it.
-- 4 blocks of 16 tokens at weight 3: a cold copy costs 19.2 ms at 10 000 tokens/s.
h = head({engines = {e1 = engine(), e2 = engine(), e3 = engine()}})
eq(cheapest_by_bound(h, 'e1', {e1 = 4}), true, 'a whole run, no wait: nothing is cheaper')
eq(next(h.costs[NO_RUNS] or {}), nil, 'no engine without a run priced')
h = head({engines = {e1 = engine(), e2 = engine(), e3 = engine()}, backlog = {e1 = 1}})
eq(cheapest_by_bound(h, 'e1', {e1 = 4}), false, 'the holder waits: the fleet is priced')
h = head({engines = {e1 = engine(), e2 = engine(), e3 = engine({rate = 40000, prefill_rate = 40000})}})
eq(cheapest_by_bound(h, 'e1', {e1 = 2}), false, 'half the prompt left costs 9.6 ms, a cold copy on e3 4.8 ms')
eq(cheapest_by_bound(h, 'e1', {e1 = 3}), true, 'a quarter left costs 4.8 ms: no cold copy is cheaper')
h = head({engines = {e1 = engine(), e2 = engine()}})
eq(cheapest_by_bound(h, 'e1', {e1 = 3, e2 = 4}), false, 'another holder with a longer run costs less')
eq(cheapest_by_bound(h, 'e2', {e1 = 3, e2 = 4}), true, 'the longer run itself')
-- The same choice either way: where the bound spares the pass, the pass finds no cheaper engine.
h = head({engines = {e1 = engine(), e2 = engine(), e3 = engine({rate = 40000, prefill_rate = 40000})}})
local runs = {e1 = 3}
eq(cost(h, soonest(h, runs), runs) < cost(h, 'e1', runs), false, 'soonest finds none cheaper than the bounded holder')

-- least_loaded: load alone, refused engines last.
h = head({engines = {e1 = engine({load = 1}), e2 = engine({status = 'BUSY'}), e3 = engine({load = 2})}})
eq(least_loaded(h), 'e1', 'least loaded of those taking requests')
h = head({engines = {e1 = engine({load = 4}), e2 = engine({load = 3})}, client = 'c', client_total = 9, inflight = {e1 = 5, e2 = 5}})
eq(least_loaded(h), 'e2', 'every engine over the client cap: the cap given up')
h = head({engines = {e1 = engine({status = 'BUSY', load = 2}), e2 = engine({status = 'SUSPECT', load = 1})}})
eq(least_loaded(h), 'e2', 'every engine overloaded: the least loaded of all')
eq(least_loaded(head()), '', 'no engine')

-- best_holder: the near-best runs (within 10 %) by load, the rest by blocks x confidence.
h = head({engines = {e1 = engine({load = 3}), e2 = engine({load = 1}), e3 = engine()}, runs = {e1 = 20, e2 = 19, e3 = 10},
  conf = {e1 = 1, e2 = 0.5, e3 = 1}, best_run = 20})
eq(best_holder(h), 'e2', 'the less loaded of two replicas')
h.runs.e2 = 17
eq(best_holder(h), 'e1', 'a shorter run is no replica')
