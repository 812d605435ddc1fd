-- A client's burst copies its prompt to a spare engine once every holder has used this share of its
-- slots (a copy takes a prefill to be ready; the holders' last free slots cover it), onto an engine
-- with at least SPARE_FREE of its slots free (decide, spare_for_burst).
local WARM_AT, SPARE_FREE = PICK.warm_at, PICK.spare_free
-- Delays within this share of the least are the same delay (decide, soonest): each engine's prefill
-- rate is learned from its own chunks and differs by noise between equal engines; without a
-- tolerance the engine measured a few percent faster takes every cold prompt while the others idle,
-- its cache churns, and the requests it evicts come back cold (BENCHMARKS.md, "Robust affinity").
local SAME_DELAY = 0.1

-- Choose. Costs within SAME_DELAY of the least are the same cost: each engine's prefill rate is
-- learned from its own chunks and differs by noise between equal engines. Of those, the longer run,
-- then the lower load, then the id.
local function before(h, a, b, runs)
  local da, db = runs[a] or 0, runs[b] or 0
  if da ~= db then return da > db end
  local la, lb = h.engines[a].load, h.engines[b].load
  if la ~= lb then return la < lb end
  return a < b
end

-- Whether engine `id` at cost `c` goes before `best` at `best_cost` (none yet: it does) by cost alone,
-- exact ties by the lower load, then the id.
local function cheaper(h, id, c, best, best_cost)
  if not best or c < best_cost then return true end
  if c ~= best_cost then return false end
  local load, best_load = h.engines[id].load, h.engines[best].load
  return load < best_load or (load == best_load and id < best)
end

-- The engine no filter refuses where the request costs the least, given each engine's run; nil when
-- every engine is refused. The same pass prices the blind choice (h.blind, see blind): the engines
-- are the same, and only a holder's cost differs without its run.
local function soonest(h, runs)
  local least, costs = math.huge, {}
  local blind_best, blind_cost = false, nil
  for id in pairs(h.engines) do
    if not refused(h, id) then
      local t = cost(h, id, runs)
      costs[id] = t
      if t < least then least = t end
      local u = runs[id] and cost(h, id, NO_RUNS) or t
      if cheaper(h, id, u, blind_best, blind_cost) then blind_best, blind_cost = id, u end
    end
  end
  if h.blind == nil then h.blind = blind_best end
  local best
  local within = least + SAME_DELAY * least
  for id, t in pairs(costs) do
    if t <= within and (not best or before(h, id, best, runs)) then best = id end
  end
  return best
end

-- The fastest prefill rate among the engines (read_engines works it out on the way: h.fastest).
local function fastest_rate(h)
  if h.fastest then return h.fastest end
  local fastest = 0
  for _, e in pairs(h.engines) do
    if e.rate > fastest then fastest = e.rate end
  end
  return fastest
end

-- Whether holder `id` costs no more than any other engine can, so that soonest's pass over every
-- engine cannot find one cheaper and is not made: the holder waits for nothing (then the added
-- wait needs no blind choice either), the other holders cost no less, priced as they are, and an
-- engine that holds none of the prompt costs at least its cold prefill at the fastest rate.
local function cheapest_by_bound(h, id, runs)
  if wait(h, id) > 0 then return false end
  local c = cost(h, id, runs)
  if not (c <= h.miss_weight * h.n * h.chunk / fastest_rate(h) * 1000) then return false end
  for other in pairs(runs) do
    if other ~= id and h.engines[other] and cost(h, other, runs) < c then return false end
  end
  return true
end

-- The engine the request would go to with nobody's cache counted (the least cost over the whole
-- prompt), or false: what the added wait is measured from. Priced by soonest when the pick chose by
-- cost; else (a burst's copy, an empty prompt) by a pass of its own.
local function blind(h)
  if h.blind == nil then soonest(h, NO_RUNS) end
  return h.blind
end

-- The cost side of the answer: how much longer the request waits to start on the chosen engine than
-- on the blind choice. Affinity is taken only where uncached_prefill_weight x the prefill it skips
-- outweighs this: the two figures a placement is judged by. Unpriced (no prefill rate) or on a view
-- too old to trust, a placement adds nothing it could measure.
local function added_wait(h, id)
  if not h.prefill_rate or h.age > h.max_age or not h.engines[id] then return 0 end
  -- No wait on the chosen engine adds nothing to any other's: the blind choice is not needed.
  if wait(h, id) == 0 then return 0 end
  local b = blind(h)
  return b and math.max(0, wait(h, id) - wait(h, b)) or 0
end

-- On load alone (a view too old to trust, no prompt, no prefill rate, or no engine the cost may
-- choose): the least loaded engine that takes requests (the contract's engine statuses) and is under
-- the client cap, else the least loaded that takes requests, else the least loaded live engine; ''
-- with none. The Java client's fallback from its own copy of the engine table (Redis away, no view)
-- is the same rule (KvRouterClient.leastLoaded; LoadOnlyFallbackITCase runs both on the same cases).
local function lowest_load(h, skip)
  local best, best_load = '', math.huge
  for id, e in pairs(h.engines) do
    if not (skip and skip(h, id)) and (e.load < best_load or (e.load == best_load and id < best)) then best, best_load = id, e.load end
  end
  return best
end
local function taking_no_requests(h, id)
  return unavailable(h.engines[id])
end
local function taking_none_or_capped(h, id)
  return unavailable(h.engines[id]) or over_client_cap(h, id)
end
local function least_loaded(h)
  local best = lowest_load(h, taking_none_or_capped)
  if best == '' then best = lowest_load(h, taking_no_requests) end
  if best == '' then best = lowest_load(h) end
  return best
end

-- Holders matching within 10 % of the longest run are replicas of the same prefix (confidence
-- already left out the entries below the floor), and among them the less loaded ranks first, so a
-- hot prefix spreads over its replicas by load; ties go to the more confident. The rest follow by
-- blocks times confidence.
local function near_best(h, id)
  return h.runs[id] * 10 >= h.best_run * 9
end
local function ranks_before(h, a, b)
  local na, nb = near_best(h, a), near_best(h, b)
  if na ~= nb then return na end
  local la, lb = h.engines[a].load, h.engines[b].load
  if na and la ~= lb then return la < lb end
  local sa, sb = h.runs[a] * h.conf[a], h.runs[b] * h.conf[b]
  if sa ~= sb then return sa > sb end
  return a < b
end
local function best_holder(h)
  local first
  for id in pairs(h.runs) do
    if not first or ranks_before(h, id, first) then first = id end
  end
  return first
end
-- Without the prefill rate a refused best holder gives way to the next holder by rank.
local function next_holder(h)
  local ranked = {}
  for id in pairs(h.runs) do ranked[#ranked + 1] = id end
  table.sort(ranked, function(a, b) return ranks_before(h, a, b) end)
  for i = 2, #ranked do
    if not refused(h, ranked[i]) then return ranked[i] end
  end
  return nil
end

