-- The filters (60-filters.lua): which engines may take a request, and the reason one may not.

-- unavailable: BUSY, DRAINING and SUSPECT take no new requests.
for _, status in ipairs({'BUSY', 'DRAINING', 'SUSPECT'}) do
  eq(unavailable(engine({status = status})), REASON.SPILL_UNAVAILABLE, 'unavailable ' .. status)
end
eq(unavailable(engine()), nil, 'unavailable READY')

-- A priced engine (rate, slots and slot time known) is never refused for its load: the cost prices it.
local h = head({engines = {e1 = engine({load = 20})}, mean = 1, free_slots = true})
eq(overloaded(h, 'e1'), nil, 'a full, hot engine that the cost can price')

-- full: unpriced (slot time not learned), every slot taken while another engine has one free.
h = head({engines = {e1 = engine({slot_ms = 0, load = 8})}, mean = 8, free_slots = true})
eq(overloaded(h, 'e1'), REASON.SPILL_FULL, 'full while another has a slot')
h.free_slots = false
eq(overloaded(h, 'e1'), nil, 'full while every engine is full')

-- A free slot is priced before any slot time is known: it waits for no request to end, and the
-- cost prices the prefill queued ahead. Every slot taken, it is not.
h = head({engines = {e1 = engine({slot_ms = 0, load = 5})}, mean = 2})
eq(overloaded(h, 'e1'), nil, 'a hot engine with a free slot, no slot time known')
h.prefill_rate = nil
eq(overloaded(h, 'e1'), REASON.SPILL_HOT, 'a free slot, no prefill rate: unpriced')
h = head({engines = {e1 = engine({slots = 4, slot_ms = 0, load = 5})}, mean = 2, free_slots = false})
eq(overloaded(h, 'e1'), REASON.SPILL_HOT, 'every slot taken, no slot time known: unpriced')

-- hot: unpriced (slots not learned), over busy_factor x the fleet mean and busy_factor requests.
h = head({engines = {e1 = engine({slots = 0, slot_ms = 0, load = 5})}, mean = 2})
eq(overloaded(h, 'e1'), REASON.SPILL_HOT, 'load 5 over 2 x mean 2')
h = head({engines = {e1 = engine({slots = 0, slot_ms = 0, load = 3})}, mean = 0.5})
eq(overloaded(h, 'e1'), REASON.SPILL_HOT, 'load 3 over 2 x max(mean, 1)')
h = head({engines = {e1 = engine({slots = 0, slot_ms = 0, load = 2})}, mean = 0.5})
eq(overloaded(h, 'e1'), nil, 'never under busy_factor requests')
-- Slots not learned and nothing waiting at the report: only what was placed since counts.
h = head({engines = {e1 = engine({slots = 0, slot_ms = 0, load = 5, running = 4, waiting = 0})}, mean = 2})
eq(overloaded(h, 'e1'), nil, 'its running requests had slots: 1 placed since')

-- over_client_cap: past client_min in flight, no engine takes more than client_cap of them.
h = head({engines = {e1 = engine(), e2 = engine()}, client = 'c', client_total = 9, inflight = {e1 = 5}})
eq(over_client_cap(h, 'e1'), REASON.SPILL_CLIENT_CAP, '6 of 10 over 0.5')
eq(over_client_cap(h, 'e2'), nil, '1 of 10')
h.client_total = 6
eq(over_client_cap(h, 'e1'), nil, 'under client_min (7 with this one)')
h.client, h.client_total = '', 9
eq(over_client_cap(h, 'e1'), nil, 'no client')

-- refused: the first filter's reason, worked out once an engine a pick.
h = head({engines = {e1 = engine({status = 'BUSY'}), e2 = engine()}, client = 'c', client_total = 9, inflight = {e2 = 9}})
eq(refused(h, 'e1'), REASON.SPILL_UNAVAILABLE, 'refused: unavailable first')
eq(refused(h, 'e2'), REASON.SPILL_CLIENT_CAP, 'refused: the client cap')
h.engines.e1.status = 'READY'
eq(refused(h, 'e1'), REASON.SPILL_UNAVAILABLE, 'refused is kept for the rest of the pick')
h = head({engines = {e1 = engine()}})
eq(refused(h, 'e1'), false, 'nothing refuses an idle engine')
