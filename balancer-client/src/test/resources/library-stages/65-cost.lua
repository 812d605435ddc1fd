-- The cost (65-cost.lua): the wait before a request's prefill can start, and the prefill it computes.

-- queue_wait: the prefill queued there.
local h = head({engines = {e1 = engine(), e2 = engine()}, backlog = {e1 = 250}})
eq(queue_wait(h, 'e1'), 250, 'queue_wait')
eq(queue_wait(h, 'e2'), 0, 'queue_wait, none queued')

-- slot_wait: with every slot taken, free_ms for each request ahead (this one included).
eq(slot_wait(engine({load = 10, slots = 8, free_ms = 500})), 1500, 'slot_wait, 2 ahead')
eq(slot_wait(engine({load = 3})), 0, 'slot_wait, a slot free')

-- kv_room_wait: a prompt over the KV room waits for running requests to end.
h = head({n = 4})
eq(kv_room_wait(h, engine({kv_room = 100})), 0, 'the prompt (64 tokens) fits')
eq(kv_room_wait(h, engine({kv_room = 10, load = 3, running = 2, slot_ms = 4000})), 4000, 'two ahead over two running: 2 x 4000 / 2')
eq(kv_room_wait(h, engine({kv_free = 10, load = 1, running = 1, slot_ms = 4000})), 4000, 'the report\'s room when nothing was placed')
eq(kv_room_wait(h, engine({load = 5, running = 2})), 0, 'room not published')

-- wait: the largest term, kept for the pick.
h = head({engines = {e1 = engine({load = 9, slots = 8, free_ms = 100, kv_room = 10, running = 8})}, backlog = {e1 = 150}})
eq(wait(h, 'e1'), math.max(150, 200, 2 * 4000 / 8), 'wait: the largest of queue, slot and KV room')
h.backlog.e1 = 10000
eq(wait(h, 'e1'), 1000, 'wait is kept for the rest of the pick')

-- kept: a run survives the prefill queued ahead as a block's life would (exp(-queued/tau)).
h = head({engines = {e1 = engine({tau = 1000}), e2 = engine()}, backlog = {e1 = 1000}})
eq(kept(h, 'e1'), math.exp(-1), 'kept after a tau of queued prefill')
eq(kept(h, 'e2'), 1, 'kept with nothing queued')

-- uncached_ms: the weighted prefill of what the engine lacks.
h = head({engines = {e1 = engine(), e2 = engine({rate = 5000})}, n = 4})
eq(uncached_ms(h, 'e1', {}), 3 * 64 / 10000 * 1000, 'the whole prompt at 10 000 tokens/s, weight 3')
eq(uncached_ms(h, 'e1', {e1 = 4}), 0, 'the whole prompt held')
eq(uncached_ms(h, 'e2', {e2 = 2}), 3 * 32 / 5000 * 1000, 'half held, at the engine\'s own rate')

-- cost: the wait plus the uncached prefill.
h = head({engines = {e1 = engine()}, backlog = {e1 = 100}, n = 4})
eq(cost(h, 'e1', {e1 = 2}), 100 + 3 * (4 - 2 * math.exp(-100 / 600000)) * 16 / 10000 * 1000, 'cost: the run as far as it is kept')

-- costlier_by: the term that made a holder cost more than the engine chosen instead.
h = head({engines = {e1 = engine(), e2 = engine()}, backlog = {e1 = 5000}, n = 4})
eq(costlier_by(h, 'e1', 'e2', {e1 = 4}), REASON.SPILL_QUEUE, 'costlier_by: its queued prefill')
h = head({engines = {e1 = engine({load = 12, free_ms = 1000}), e2 = engine()}, backlog = {e1 = 100}, n = 4})
eq(costlier_by(h, 'e1', 'e2', {e1 = 4}), REASON.SPILL_SLOTS, 'costlier_by: the slot wait, the larger of its waits')
h = head({engines = {e1 = engine({kv_room = 10, load = 2, running = 1}), e2 = engine()}, n = 4})
eq(costlier_by(h, 'e1', 'e2', {e1 = 4}), REASON.SPILL_KV_ROOM, 'costlier_by: KV room')
h = head({engines = {e1 = engine({rate = 1000}), e2 = engine()}, backlog = {e1 = 10}, n = 4})
eq(costlier_by(h, 'e1', 'e2', {e1 = 2}), REASON.SPILL_PREFILL, 'costlier_by: its own prefill outweighs a short queue')

-- cost is kept for the rest of the pick, by the runs it was priced with.
h = head({engines = {e1 = engine()}, backlog = {e1 = 100}, n = 4})
local some_runs = {e1 = 2}
local priced = cost(h, 'e1', some_runs)
h.backlog.e1, h.waits = 5000, {}
eq(cost(h, 'e1', some_runs), priced, 'cost is kept for the rest of the pick')
eq(cost(h, 'e1', {}) > priced, true, 'priced again with other runs')
