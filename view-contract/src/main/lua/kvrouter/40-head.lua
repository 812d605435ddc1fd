-- A prefill queue's value, t<tokens>|at_ms, as {tokens, at_ms, true}, or an older library's
-- queued_ms|at_ms as {queued_ms, at_ms, false} (false when malformed): only the engine a placement
-- went to changes, so the others' come from the memo.
local prefill_of = memo(function(v)
  local tokens, at = string.match(v, '^t([^|]+)|(%d+)$')
  if tokens then return {tonumber(tokens), tonumber(at), true} end
  local queued, since = string.match(v, '^([^|]+)|(%d+)$')
  return queued and {tonumber(queued), tonumber(since), false} or false
end)

-- What every placement reads from the head slot (read_head, below, in five steps): the meta
-- figures, the live engines with the reservations their load reports do not cover yet, the prefill
-- queued on each, the operator's class switches key and the client's live reservations.

-- The meta figures as h, the pick's own table; nil without a view (no meta key).
local function read_meta(meta_key, now)
  local meta = redis.call('HMGET', meta_key, 'updated_ms', 'busy_factor', 'confidence_floor', 'client_cap', 'client_min_inflight',
    'chunk_tokens', 'kv_bytes_per_token', 'prefill_tokens_per_s', 'fabric_bytes_per_s', 'usd_per_million_input',
    'uncached_prefill_weight', 'reservation_ttl_ms')
  if not meta[1] then return nil end
  local h = {
    now = now, age = now - tonumber(meta[1]), busy_factor = tonumber(meta[2]) or META_DEFAULT.busy_factor, floor = tonumber(meta[3]) or META_DEFAULT.confidence_floor,
    client_cap = tonumber(meta[4]) or META_DEFAULT.client_cap, client_min = tonumber(meta[5]) or META_DEFAULT.client_min_inflight,
    chunk = tonumber(meta[6]) or META_DEFAULT.chunk_tokens,
    kv_bytes = tonumber(meta[7]), prefill_rate = tonumber(meta[8]), fabric = tonumber(meta[9]),
    price = tonumber(meta[10]) or META_DEFAULT.usd_per_million_input, miss_weight = tonumber(meta[11]) or META_DEFAULT.uncached_prefill_weight,
    res_ttl = tonumber(meta[12]) or META_DEFAULT.reservation_ttl_ms,
    -- What the rest of the pick puts in h, named here so that the table is sized once (added one by
    -- one they grew it five times a pick); false until set.
    horizon = 0, classes = false, res = false, keys = false, client = false, kept = false, engines = false, decoders = false,
    mean = 0, decode_mean = 0, fastest = false, free_slots = false, backlog = false, inflight = false,
    client_total = 0, at = false, sampled = false, n = 0, max_age = 0, best_run = 0, runs = false, conf = false,
    waits = false, refusals = false, costs = false, warming = false, pending_entries = false,
  }
  h.horizon = -math.log(h.floor)
  return h
end

-- The live engines (h.engines; a DECODE pool apart: h.decoders) with their load: the last report's,
-- plus every placement made after the engine measured it (by any balancer: the report does not show
-- it yet), less every request reported done since (which the report still counts). Engines in
-- `avoid` (a set) are left out as if dead: the caller could not reach them. The same pass sums the
-- slot times learned, tells whether a slot is free (h.free_slots) and finds the fastest prefill
-- rate (h.fastest); it returns, for learn_unknown, the slots learned: the engines whose slots or
-- slot time are not learned yet (unknown), the full ones, the fewest slots, the longest slot time
-- and the sum and count of the slot times.
local function read_engines(h, engines_key, avoid, k)
  local res, now = h.res, h.now
  -- Prompts go to BOTH and PREFILL engines; a DECODE pool (disaggregated serving) only takes the
  -- hand-off, so it is kept apart, with its own mean.
  local engines, live, total_load = {}, 0, 0
  local decoders, decode_live, decode_load = {}, 0, 0
  local flat = redis.call('HGETALL', engines_key)
  local fewest, longest, unknown, full = nil, nil, {}, {}
  local slot_sum, slot_known, free_slots, fastest = 0, 0, false, 0
  for i = 1, #flat, 2 do
    local id, e = flat[i], parse_engine(flat[i + 1])
    if not e.gone and not avoid[id] then
      if e.decode_only then
        e.load = e.waiting + e.running
        decoders[id] = e
        decode_live = decode_live + 1
        decode_load = decode_load + e.load
      else
        local bound = e.after_report
        local load = e.waiting + e.running + count_after(k, res, RESERVED, id, bound, now)
          - count_after(k, res, DONE, id, bound, now)
        if not (load > 0) then load = 0 end
        e.load = load
        -- The rate the engine prefills at, as its requests showed it; the configured one until known.
        local rate = e.prefill_rate > 0 and e.prefill_rate or h.prefill_rate
        e.rate = rate
        if rate and rate > fastest then fastest = rate end
        engines[id] = e
        live = live + 1
        total_load = total_load + load
        local slots, slot_ms = e.slots, e.slot_ms
        if slots > 0 and (not fewest or slots < fewest) then fewest = slots end
        if slot_ms > 0 and (not longest or slot_ms > longest) then longest = slot_ms end
        if slots > 0 and slot_ms > 0 then
          slot_sum, slot_known = slot_sum + slot_ms, slot_known + 1
          if load < slots then free_slots = true else full[#full + 1] = e end
        else
          unknown[#unknown + 1] = id
        end
      end
    end
  end
  h.engines, h.decoders = engines, decoders
  h.mean = live > 0 and total_load / live or 0
  h.decode_mean = decode_live > 0 and decode_load / decode_live or 0
  h.free_slots, h.fastest = free_slots, fastest
  return {unknown = unknown, full = full, fewest = fewest, longest = longest, slot_sum = slot_sum,
    slot_known = slot_known}
end

-- Slots and slot times not learned yet (the engines `slots.unknown` of read_engines), filled in;
-- whether any engine has a slot free (h.free_slots); and how long a full engine takes to free each
-- slot a request placed there waits for (free_ms).
local function learn_unknown(h, slots)
  local engines, unknown, full, fewest, longest = h.engines, slots.unknown, slots.full, slots.fewest, slots.longest
  local slot_sum, slot_known = slots.slot_sum, slots.slot_known
  for _, id in ipairs(unknown) do
    local e = engines[id]
    -- An engine whose slots are not learned yet (it never had requests waiting) is taken to have as
    -- many as the smallest engine that has: else it would look free while full and take every
    -- request spilled from the full ones until it is hot.
    if e.slots == 0 and fewest then e.slots = fewest end
    -- Likewise an engine whose slot time is not learned yet (none of its requests has finished: the
    -- first seconds of a burst) holds a slot as long as the slowest engine that has one: else, full,
    -- it would cost no wait and draw every request. None known anywhere (no request has finished
    -- yet): a full engine's requests have held their slots at least as long as its oldest live
    -- reservation is old, a lower bound that grows until the first one finishes.
    if e.slot_ms == 0 and longest then
      e.slot_ms = longest
    elseif e.slot_ms == 0 and e.slots > 0 and e.load >= e.slots then
      local oldest = redis.call('ZRANGE', h.keys.reserved .. id, 0, 0, 'WITHSCORES')[2]
      if oldest then e.slot_ms = math.max(0, h.now - tonumber(oldest)) end
    end
    if e.slot_ms > 0 then slot_sum, slot_known = slot_sum + e.slot_ms, slot_known + 1 end
    -- Whether any engine has a slot free (or slots not known yet): when every one is full, waiting
    -- is everywhere and a full engine is no reason to leave the cache.
    if e.slots == 0 or e.load < e.slots then h.free_slots = true end
    if e.slots > 0 and e.slot_ms > 0 and e.load >= e.slots then full[#full + 1] = e end
  end
  -- The fleet's mean slot time over the engine's slots. When a slot frees depends on the running
  -- requests' output lengths, which no report carries; an engine's own mean slot time (its last
  -- completions) is a noisy guess at it, and choosing among full engines by it cost more wait than
  -- counting the requests ahead at one pace (BENCHMARKS.md run 11; the pace of the last
  -- completions, run 7, did worse still). A slower engine still shows: its queue drains slower, so
  -- it stays longer.
  for _, e in ipairs(full) do
    e.free_ms = slot_sum / slot_known / e.slots
  end
end

-- The prefill every placement sent to an engine (its uncached tokens), as a queue that drains in
-- real time at the engine's rate as known now: how long a new request there waits for its own
-- prefill (h.backlog). Priced at read, so an engine seen slower since the placements (its chunks
-- come slower: EngineTable) has its whole queue stretched at once, not only the prefill placed after.
local function read_backlog(h)
  local backlog, engines, now = {}, h.engines, h.now
  h.backlog = backlog
  if not h.prefill_rate then return end
  local q = redis.call('HGETALL', h.keys.prefill)
  for i = 1, #q, 2 do
    local entry = prefill_of(q[i + 1])
    if entry and entry[1] and entry[2] then
      local id = q[i]
      local e = engines[id]
      local rate = e and e.rate or h.prefill_rate
      local queued_ms = entry[3] and entry[1] / rate * 1000 or entry[1]
      local left = queued_ms - (now - entry[2])
      if not (left > 0) then left = 0 end
      backlog[id] = left
      -- KV room: what the report showed free, less the prompts placed there and not prefilled yet (each
      -- will hold its blocks once admitted; those admitted already count twice: it errs towards full).
      if e and e.kv_free then e.kv_room = e.kv_free - left * rate / 1000 end
    end
  end
end

-- The client's live reservations per engine, for the client cap.
local function read_client(h)
  h.inflight, h.client_total = {}, 0
  if h.client == '' then return end
  local c = redis.call('HGETALL', h.keys.client .. h.client)
  for i = 1, #c, 2 do
    local count = tonumber(c[i + 1]) or 0
    if count > 0 then
      h.inflight[c[i]] = count
      h.client_total = h.client_total + count
    end
  end
end

-- The head (see above); nil without a view. `writing`: the call may write (see kept_counts).
local function read_head(meta_key, engines_key, classes_key, res, client, now, avoid, writing)
  local h = read_meta(meta_key, now)
  if not h then return nil end
  h.classes, h.res, h.keys, h.client = classes_key, res, res_keys(res), client
  h.kept = kept_counts(res, writing, h.res_ttl)
  learn_unknown(h, read_engines(h, engines_key, avoid, h.kept))
  read_backlog(h)
  read_client(h)
  return h
end

