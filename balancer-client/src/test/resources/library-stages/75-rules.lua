-- The rules (75-rules.lua): the best holder keeps a request unless a filter refuses it, a burst needs
-- a copy or another engine costs strictly less; the answer and what it saves.
local function runs(r, c) return function() return r, c end end

-- A view too old, or an empty prompt: load alone.
local h = head({engines = {e1 = engine({load = 1}), e2 = engine()}, age = 3000})
eq(field(decide(h, 4, '', 2000, runs({}, {})), 'reason'), REASON.FALLBACK_LOAD_ONLY, 'stale')
h = head({engines = {e1 = engine({load = 1}), e2 = engine()}})
local a = decide(h, 0, '', 2000, runs({}, {}))
eq(field(a, 'reason'), REASON.COLD, 'empty prompt')
eq(field(a, 'engine'), 'e2', 'empty prompt: least loaded')

-- Nobody holds it: where it starts soonest.
h = head({engines = {e1 = engine(), e2 = engine()}, backlog = {e1 = 100}})
a = decide(h, 4, '', 2000, runs({}, {}))
eq(field(a, 'engine'), 'e2', 'cold: the engine with no queue')
eq(field(a, 'reason'), REASON.COLD, 'cold')
eq(field(a, 'outcome'), OUTCOME.COLD, 'cold saves nothing')

-- The best holder, idle: affinity, a hit of the whole run.
h = head({engines = {e1 = engine(), e2 = engine()}})
a = decide(h, 4, '', 2000, runs({e1 = 4}, {e1 = 0.9}))
eq(field(a, 'engine'), 'e1', 'affinity')
eq(field(a, 'reason'), REASON.AFFINITY, 'affinity')
eq(field(a, 'outcome'), OUTCOME.HIT, 'a hit')
eq(field(a, 'saved_tokens'), 64, 'the whole run saved')
eq(field(a, 'confidence'), '0.9000', 'the run\'s confidence')

-- The best holder with seconds of prefill queued: another engine costs strictly less.
h = head({engines = {e1 = engine(), e2 = engine()}, backlog = {e1 = 5000}})
a = decide(h, 4, '', 2000, runs({e1 = 4}, {e1 = 1}))
eq(field(a, 'engine'), 'e2', 'away from a queued holder')
eq(field(a, 'reason'), REASON.SPILL_QUEUE, 'spilled on cost: the queued prefill decided')
eq(field(a, 'best_match'), 4, 'the best holder\'s match still answered')
-- ...every slot taken, 8 requests ahead of 2 s each: the slot wait decided.
h = head({engines = {e1 = engine({load = 15, free_ms = 2000}), e2 = engine()}})
a = decide(h, 4, '', 2000, runs({e1 = 4}, {e1 = 1}))
eq(field(a, 'engine'), 'e2', 'spilled on cost: the slot wait decided')
eq(field(a, 'reason'), REASON.SPILL_SLOTS, 'spilled on cost: the slot wait decided')
-- ...a prompt over its KV room, two requests ahead of one running: the KV room decided.
h = head({engines = {e1 = engine({kv_room = 10, load = 2, running = 1}), e2 = engine()}})
a = decide(h, 4, '', 2000, runs({e1 = 4}, {e1 = 1}))
eq(field(a, 'engine'), 'e2', 'spilled on cost: the KV room decided')
eq(field(a, 'reason'), REASON.SPILL_KV_ROOM, 'spilled on cost: the KV room decided')
-- ...holding half the prompt at a tenth of the rate: its own prefill decided.
h = head({engines = {e1 = engine({rate = 1000}), e2 = engine()}})
a = decide(h, 4, '', 2000, runs({e1 = 2}, {e1 = 1}))
eq(field(a, 'engine'), 'e2', 'spilled on cost: the holder\'s slower prefill decided')
eq(field(a, 'reason'), REASON.SPILL_PREFILL, 'spilled on cost: the holder\'s slower prefill decided')

-- The best holder refused: the least cost elsewhere, with the filter's reason (a replica if it holds a run).
h = head({engines = {e1 = engine({status = 'DRAINING'}), e2 = engine(), e3 = engine()}})
a = decide(h, 4, '', 2000, runs({e1 = 4, e3 = 2}, {e1 = 1, e3 = 1}))
eq(field(a, 'engine'), 'e3', 'the replica costs least')
eq(field(a, 'reason'), REASON.REPLICA, 'a replica')
h = head({engines = {e1 = engine(), e2 = engine()}, client = 'c', client_total = 9, inflight = {e1 = 6}})
a = decide(h, 4, '', 2000, runs({e1 = 4}, {e1 = 1}))
eq(field(a, 'engine'), 'e2', 'the client cap')
eq(field(a, 'reason'), REASON.SPILL_CLIENT_CAP, 'the client cap')

-- A class an operator turned off: as if nobody held it.
redis.call('HSET', prefix .. 'classes', 'c1', 'off')
h = head({engines = {e1 = engine(), e2 = engine()}, backlog = {e1 = 10}})
a = decide(h, 4, 'c1', 2000, runs({e1 = 4}, {e1 = 1}))
eq(field(a, 'engine'), 'e2', 'class off: where it starts soonest')
eq(field(a, 'reason'), REASON.NO_AFFINITY_CLASS, 'class off')

-- A client's burst: with every holder filling, one request goes cold to a spare.
h = head({engines = {e1 = engine({load = 6}), e2 = engine()}, client = 'c', client_total = 8, inflight = {e1 = 4, e2 = 4},
  client_cap = 1})
a = decide(h, 4, '', 2000, runs({e1 = 4}, {e1 = 1}))
eq(field(a, 'engine'), 'e2', 'the burst\'s spare')
eq(field(a, 'reason'), REASON.BURST_COPY, 'a burst copy')
h.warming = {e2 = 4}
a = decide(h, 4, '', 2000, runs({e1 = 4}, {e1 = 1}))
eq(field(a, 'engine'), 'e1', 'a copy already on its way: no second one')

-- The answer: a transfer when moving the holder's KV beats recomputing it.
h = head({engines = {e1 = engine({status = 'BUSY'}), e2 = engine()}, kv_bytes = 131072, fabric = 25e9})
a = decide(h, 4, '', 2000, runs({e1 = 4}, {e1 = 1}))
eq(field(a, 'outcome'), OUTCOME.TRANSFER, 'a transfer')
eq(field(a, 'saved_tokens'), 64, 'the holder\'s run moved')
eq(#a, ANSWER_SIZE, 'every field of the answer')
