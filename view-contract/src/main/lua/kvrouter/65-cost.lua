-- Cost: the wait before the request's own prefill can start on the engine, the largest of three
-- terms, plus the prefill it still computes there.

-- Queued prefill: what every balancer placed there and the engine has not computed yet, drained in
-- real time at the engine's rate (read_head: h.backlog).
local function queue_wait(h, id)
  return h.backlog[id] or 0
end

-- A slot: with every slot taken, one freeing for each request ahead (free_ms each: read_head).
local function slot_wait(e)
  if not e.free_ms then return 0 end
  return (e.load - e.slots + 1) * e.free_ms
end

-- KV room: where the room the job publishes (engine.kv-room) holds less than the prompt, the engine
-- admits it only once running requests end and free their blocks, as a full engine would: a slot
-- time over what it runs, per request ahead. A cache a few prompts deep is full at a few requests,
-- far below its slots (BENCHMARKS.md, "Cache pressure at seeds 1–3"). The need is the whole prompt,
-- its cached run included: admitted, a request pins its cached blocks too, and only running
-- requests' blocks count as used (a conversation's earlier turn, ended, pins nothing).
local function kv_room_wait(h, e)
  local room = e.kv_room or e.kv_free
  if not room or h.n * h.chunk <= room or e.slot_ms <= 0 then return 0 end
  return (math.max(0, e.load - e.running) + 1) * e.slot_ms / math.max(1, e.running)
end

-- How long a request placed on the engine waits before its own prefill can start.
local function wait(h, id)
  local w = h.waits[id]
  if not w then
    local e = h.engines[id]
    -- The largest of the three, each term asked only where it can be more than nothing.
    w = queue_wait(h, id)
    if e.free_ms then w = math.max(w, slot_wait(e)) end
    if e.kv_room or e.kv_free then w = math.max(w, kv_room_wait(h, e)) end
    h.waits[id] = w
  end
  return w
end

-- The share of an engine's run still cached when the request's own prefill starts there: the view's
-- model of a block's life (confidence exp(-age/tau)) carried over the prefill queued ahead of it.
-- That prefill stores other prompts' blocks first; where caches are a few prompts deep it evicts the
-- run before the request reaches it, and the request recomputes it all behind that queue
-- (BENCHMARKS.md, "Robust affinity": cache pressure). Waiting for a slot stores nothing (a full
-- engine admits no one until a request ends), so only the queued prefill counts, not the whole
-- wait. Deep caches have a tau of minutes: there it is 1 for any queue worth a holder.
local function kept(h, id)
  return math.exp(-(h.backlog[id] or 0) / math.max(1, h.engines[id].tau))
end

-- The prefill of the prompt's blocks the engine lacks (past its run in `runs`, as far as the run is
-- kept) at that engine's rate, weighted by uncached_prefill_weight (3: for this request's first
-- token, for the requests queued behind its prefill there, and for the cache room a second copy of
-- another engine's blocks takes).
local function uncached_ms(h, id, runs)
  local d = runs[id]
  if d and d > 0 then d = d * kept(h, id) else d = 0 end
  return h.miss_weight * (h.n - d) * h.chunk / h.engines[id].rate * 1000
end

-- Kept for the rest of the pick by the runs it was priced with (h.runs, or none: NO_RUNS): the rules
-- ask again for the engines the choice compared. An engine the runs give nothing costs what it costs
-- with none, kept once under NO_RUNS: the blind choice (choose) prices every engine again.
local NO_RUNS = {}
local function cost(h, id, runs)
  if not runs[id] or runs[id] <= 0 then runs = NO_RUNS end
  local priced = h.costs[runs]
  if not priced then
    priced = {}
    h.costs[runs] = priced
  end
  local c = priced[id]
  if not c then
    c = wait(h, id) + uncached_ms(h, id, runs)
    priced[id] = c
  end
  return c
end

-- The term that made holder `a` cost more than `b`, the engine chosen instead (the reason it spills
-- with): its own prefill of what it lacks where that outweighs the difference in waits, else the
-- largest of its three waits.
local function costlier_by(h, a, b, runs)
  if uncached_ms(h, a, runs) - uncached_ms(h, b, runs) >= wait(h, a) - wait(h, b) then return REASON.SPILL_PREFILL end
  local e = h.engines[a]
  local queue, slot, room = queue_wait(h, a), slot_wait(e), kv_room_wait(h, e)
  if queue >= slot and queue >= room then return REASON.SPILL_QUEUE end
  return slot >= room and REASON.SPILL_SLOTS or REASON.SPILL_KV_ROOM
end

