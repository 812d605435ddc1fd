-- The decision, stage by stage. A pick reads the head (read_head: h), matches the prompt (each
-- holder's run of blocks from the first, and its confidence: h.runs, h.conf), and then:
--   filters   which engines may take the request, and the reason one may not (refused);
--   cost      the expected time to its first token on each engine: the wait before its own prefill
--             can start there (queued prefill, a slot, KV room) plus the prefill of the blocks that
--             engine lacks, weighted (cost);
--   choose    the least cost, near ties by the longer run, then load, then id (soonest);
--   rules     the best holder keeps the request unless a filter refuses it, a client's burst needs a
--             copy, or another engine costs strictly less (decide);
--   answer    the engine, the reason and what the placement is expected to save (answer).
-- What a stage works out for one engine is kept in h for the rest of the pick (h.waits, h.refusals,
-- h.costs).

-- Filters. Each answers nil when the engine may take the request, else the reason it spills with.

-- Takes no new requests: BUSY, DRAINING, or SUSPECT (silent for a while: it keeps its entries but
-- gets no new affinity either).
local function unavailable(e)
  local status = ENGINE_STATUS[e.status]
  if status and not status.takes_requests then return REASON.SPILL_UNAVAILABLE end
  return nil
end

-- Where the cost can price what a full or hot engine costs a request there (the prefill rate, the
-- engine's slots and slot time known: the prefill queued ahead of it, the wait for a slot), neither
-- turns a holder away by itself: an engine with a free slot may have seconds of cold prefills
-- queued. Until then the two load thresholds below do. A free slot needs no slot time: a request
-- placed there waits for no other to end, only for the prefill queued ahead, which the cost prices;
-- before any request of the fleet had ended, a holder with free slots was turned away as hot
-- (system-prompt's slowest request at 1 balancer: BENCHMARKS.md, "The whole matrix on this routing").
local function unpriced(h, e)
  return not (h.prefill_rate and e.slots > 0 and (e.slot_ms > 0 or e.load < e.slots))
end

-- Every slot taken (the engine's requests, with the placements since its report, fill the slots it
-- was last seen full at) while some engine has one free: a request placed here waits for another to
-- finish, seconds of decode, while an engine with a free slot only has to prefill what it lacks.
local function full(h, e)
  if e.slots > 0 and e.load >= e.slots and h.free_slots then return REASON.SPILL_FULL end
  return nil
end

-- Hot: above busy_factor times the fleet mean, and never under busy_factor requests (an engine with
-- one or two requests in a nearly idle fleet concentrates nothing; LoadStats.hotAbove). Until the
-- fleet's slots are learned (no engine has had a request wait yet), an engine whose last report
-- showed none waiting had a slot free for each request it ran then: only what was placed there
-- since (by any balancer) can have filled it, so only that counts. Its running requests alone would
-- send a popular prompt's requests cold elsewhere, each paying the whole prefill, while the holder
-- starts them at once (system-prompt, run 9).
local function hot(h, e)
  local counted = e.load
  if e.slots == 0 and e.waiting == 0 then counted = e.load - e.running end
  if counted > h.busy_factor * math.max(h.mean, 1) then return REASON.SPILL_HOT end
  return nil
end

local function overloaded(h, id)
  local e = h.engines[id]
  local why = unavailable(e)
  if why or not unpriced(h, e) then return why end
  return full(h, e) or hot(h, e)
end

-- One client's burst must not become one engine's point load: past the minimum, no engine may take
-- more than client_cap of the client's live reservations (this one included).
local function over_client_cap(h, id)
  if h.client == '' or h.client_total + 1 < h.client_min then return nil end
  if ((h.inflight[id] or 0) + 1) / (h.client_total + 1) > h.client_cap then return REASON.SPILL_CLIENT_CAP end
  return nil
end

-- The first filter that refuses the engine (its reason), or false; worked out once an engine a pick.
local function refused(h, id)
  local why = h.refusals[id]
  if why == nil then
    why = overloaded(h, id) or over_client_cap(h, id) or false
    h.refusals[id] = why
  end
  return why
end

