-- The line for a slot (78-hold.lua): a request whose engine of choice has every slot taken, while
-- another has one free, waits in the fleet's line (HOLD) instead of on that engine, when its balancer
-- offered to hold it; it keeps its place until placed, and once it has waited hold_ms it is placed.
local line = prefix .. 'res' .. RES_KEY.hold
local function full_and_free()
  return head({hold_ms = 5000, engines = {e1 = engine({load = 8}), e2 = engine({load = 2})}})
end
local function placed_on(result) return result[ANSWER.engine] end

-- The engine chosen is full, another has a slot: told HOLD, and in the line from now.
local h = full_and_free()
local a = placed_or_held(h, answer(h, 'e1', 0, REASON.AFFINITY), 'r1', 4)
eq(field(a, 'reason'), REASON.HOLD, 'a full engine chosen: held')
eq(placed_on(a), '', 'held: no engine')
eq(tonumber(redis.call('ZSCORE', line, 'r1')), h.now, 'in the line since now')
eq(redis.call('HGET', h.res, 'r1'), false, 'held: nothing reserved')

-- Asked again later, still full: it keeps its first place (the line's order).
h = full_and_free()
h.now, h.in_line = h.now + 100, true
placed_or_held(h, answer(h, 'e1', 0, REASON.AFFINITY), 'r1', 4)
eq(tonumber(redis.call('ZSCORE', line, 'r1')), h.now - 100, 'its first place kept')

-- Its engine freed a slot: placed, reserved, out of the line.
h = full_and_free()
h.engines.e1.load, h.in_line = 7, true
a = placed_or_held(h, answer(h, 'e1', 0, REASON.AFFINITY), 'r1', 4)
eq(placed_on(a), 'e1', 'a free slot: placed')
eq(redis.call('ZSCORE', line, 'r1'), false, 'placed: out of the line')
check(redis.call('HGET', h.res, 'r1') ~= false, 'placed: reserved')

-- Placed on a full engine as it is: waited hold_ms, no hold offered, no request id, or every engine
-- full (then hold, before the decision, holds it while nothing frees).
h = full_and_free()
h.waited_out = true
eq(placed_on(placed_or_held(h, answer(h, 'e1', 0, REASON.AFFINITY), 'r2', 4)), 'e1', 'waited hold_ms: placed')
h = full_and_free()
h.hold_ms = 0
eq(placed_on(placed_or_held(h, answer(h, 'e1', 0, REASON.AFFINITY), 'r3', 4)), 'e1', 'no hold offered: placed')
h = full_and_free()
eq(placed_on(placed_or_held(h, answer(h, 'e1', 0, REASON.AFFINITY), '', 4)), 'e1', 'no request id: placed')
h = full_and_free()
h.free_slots = false
eq(placed_on(placed_or_held(h, answer(h, 'e1', 0, REASON.AFFINITY), 'r4', 4)), 'e1', 'every engine full: placed')
-- Slots not learned: nothing tells it is full.
h = full_and_free()
h.engines.e1.slots = 0
eq(placed_on(placed_or_held(h, answer(h, 'e1', 0, REASON.AFFINITY), 'r5', 4)), 'e1', 'slots unknown: placed')
eq(redis.call('ZCARD', line), 0, 'none of them in the line')
