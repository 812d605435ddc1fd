#!lua name=kvrouter

-- kv-router's routing view functions. Loaded (FUNCTION LOAD REPLACE) by the view sink when it
-- starts; the layout is documented in redis-sink/README.md. Keep in step with ViewLayout.java.
local LAYOUT = 9
-- The library's revision within its layout: one more at every change of what it answers or writes
-- (LibraryRevisionTest holds each revision's code hash). A job refuses to replace a library of a
-- later layout or revision than its own (ViewConnection.loadViewFunctions): an older job must not
-- silently downgrade the routing of every balancer.
local REVISION = 4

-- Engine table value: status|waiting|running|kv_permille|tau_ms|epoch|unsynced|load_ms|role|slots|prefill_tps|slot_ms[|kv_free_tokens]
-- (read with one pattern: every pick parses every engine, and one match costs a third less than a split).
local ENGINE_FIELDS = '^([^|]*)|?([^|]*)|?([^|]*)|?([^|]*)|?([^|]*)|?([^|]*)|?([^|]*)|?([^|]*)|?([^|]*)|?([^|]*)|?([^|]*)|?([^|]*)|?([^|]*)'
local function engine_fields(v)
  local status, waiting, running, kv, tau, epoch, unsynced, load_ms, role, slots, prefill_rate, slot_ms, kv_free =
    string.match(v, ENGINE_FIELDS)
  return {
    status = status, waiting = tonumber(waiting) or 0, running = tonumber(running) or 0,
    kv = tonumber(kv) or 0, tau = tonumber(tau) or 1, epoch = epoch, epoch_number = tonumber(epoch),
    unsynced = unsynced == '1', load_ms = tonumber(load_ms) or 0,
    -- The ZCOUNT bound for what came after the report, as written (not turned back into text on every pick).
    after_report = '(' .. (tonumber(load_ms) and load_ms or '0'),
    gone = status == 'DEAD' or status == 'RESTARTED',
    decode_only = role == 'DECODE', slots = tonumber(slots) or 0, prefill_rate = tonumber(prefill_rate) or 0,
    slot_ms = tonumber(slot_ms) or 0,
    -- The KV room free at the report, in tokens; nil when the job does not publish it (engine.kv-room).
    kv_free = tonumber(kv_free),
  }
end

-- A parse kept by its text between calls (a library's locals live as long as it is loaded), for the
-- values a pick reads whole on every call though they change far less often: an engine's entry stays
-- the same text from one of its reports to the next, thousands of picks, and parsing every engine on
-- every pick was a third of reading the head. What the memo returns is what parsing gives (it is never
-- written to); bounded: dropped whole once it holds MEMO_CAP texts (each report is a new one).
local MEMO_CAP = 4096
local function memo(parse)
  local parsed, size = {}, 0
  return function(text)
    local value = parsed[text]
    if value == nil then
      if size >= MEMO_CAP then parsed, size = {}, 0 end
      value = parse(text)
      parsed[text] = value
      size = size + 1
    end
    return value
  end
end

-- An engine entry's fields, shared by every pick that reads the same text (see memo).
local engine_fields_of = memo(function(v) return {__index = engine_fields(v)} end)

-- The engine an entry's text describes, as a table of the pick's own: the parsed fields are read
-- through it from the memo, and a pick's own figures (load and the rest) go in the table itself.
local function parse_engine(v)
  return setmetatable({}, engine_fields_of(v))
end

-- Block field value: engine=stored_ms(base 36).epoch(base 36),engine=... (pending values alike, with
-- ready_ms for stored_ms). HOLDER captures one entry: its text, engine, stored_ms and epoch.
local HOLDER = '(([^,=]+)=(%w+)%.(%w+))'
local function holders(v)
  local h = {}
  if v then
    for _, engine, stored, epoch in string.gmatch(v, HOLDER) do
      h[engine] = {stored = tonumber(stored, 36), epoch = tostring(tonumber(epoch, 36))}
    end
  end
  return h
end

-- One engine's entry in a block field, without parsing the others: its stored_ms and epoch, both in
-- base 36, or nil. `lead` is "<engine>=" and `mid` ",<engine>=" (made once per engine, not per block).
local function holder_of(v, lead, mid)
  local at
  if string.sub(v, 1, #lead) == lead then
    at = #lead + 1
  else
    local s = string.find(v, mid, 1, true)
    if not s then return nil end
    at = s + #mid
  end
  return string.match(v, '^(%w+)%.(%w+)', at)
end

-- A non-negative integer in base 36 (block fields' numbers).
local function to36(x)
  local digits, out = '0123456789abcdefghijklmnopqrstuvwxyz', ''
  x = math.floor(x)
  repeat
    local d = x % 36
    out = string.sub(digits, d + 1, d + 1) .. out
    x = (x - d) / 36
  until x == 0
  return out
end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Reservations: every placement kvr_pick (or kvr_place) makes is recorded with the decision, in the
-- head slot beside the engine table, so the next pick of any balancer counts it before the engine
-- reports the load (redis-sink/README.md, "Reservations"). With <res> the reservations key:
--   <res>                 hash  request id -> engine|at_ms|uncached prompt tokens|client
--   <res>:by-time         zset  request id, scored by at_ms: the order reservations expire in
--   <res>:engine:<engine> zset  request id, scored by at_ms: what a load report at load_ms covers
--   <res>:client:<client> hash  engine -> the client's live reservations there (the client cap)
--   <res>:prefill         hash  engine -> t<tokens>|at_ms: prefill tokens placed there and not computed as of at_ms,
--                               priced at the engine's rate when read (an older library wrote queued_ms|at_ms)
--   <res>:done:<engine>   zset  request id, scored by when it was reported done: requests the
--                               engine's last load report still counts, one less each until the next
-- Every key expires reservation_ttl_ms (done: DONE_KEEP_MS) after its last write: with no balancer
-- left, nothing stays.
local DEFAULT_RESERVATION_TTL_MS = 60000
-- Reservations one engine keeps at most (the oldest leave first).
local RESERVATION_CAP = 1024
-- Expired reservations a placement sweeps at most (bounded work per pick; every pick sweeps).
local SWEEP = 16
-- How long a done request is remembered against its engine's load: far longer than a load report
-- interval, after which a report has long covered it.
local DONE_KEEP_MS = 60000
-- A client's burst copies its prompt to a spare engine once every holder has used this share of its
-- slots (a copy takes a prefill to be ready; the holders' last free slots cover it), onto an engine
-- with at least SPARE_FREE of its slots free (decide, spare_for_burst).
local WARM_AT = 0.75
local SPARE_FREE = 0.5
-- Delays within this share of the least are the same delay (decide, soonest): each engine's prefill
-- rate is learned from its own chunks and differs by noise between equal engines; without a
-- tolerance the engine measured a few percent faster takes every cold prompt while the others idle,
-- its cache churns, and the requests it evicts come back cold (BENCHMARKS.md, "Robust affinity").
local SAME_DELAY = 0.1

-- Pending prefixes: what a placement brings to its engine, before the engine's BlockStored crosses
-- the pipeline (a second or more). Every reservation also records the placed prompt's block hashes
-- at a few positions (1, 2, 4, 8, ... and the last) under
--   <res>:pending          hash  block hash -> engine=ready_ms.epoch,... (base 36, as block fields)
--   <res>:pending:by-time  zset  block hash, scored by when its last holder there expires
-- where ready_ms is when the engine will hold the prompt (the prefill queued there plus its own).
-- A chain hash at position p names the whole prefix up to p, so a later prompt whose hash at p is
-- there shares at least p blocks with a placement: a lower bound within 2x of the shared run. From
-- ready_ms until PENDING_MS after it, picks count that run as held (the view takes over once the
-- engine reports it); before ready_ms the engine is still computing it, and a request sent there
-- would compute it again.
local PENDING_MS = 5000
-- Engines one pending block keeps at most (the latest ready stay), and block hashes at most.
local PENDING_HOLDERS = 8
local PENDING_CAP = 8192

-- The positions of a prompt of n blocks that pending prefixes record and look up: 1, 2, 4, ... below n, and n.
local function sampled(n)
  local at, p = {}, 1
  while p < n do
    at[#at + 1] = p
    p = p * 2
  end
  if n > 0 then at[#at + 1] = n end
  return at
end

-- Counts kept between calls. Every pick counts, for each engine, its reservations after its last
-- load report and the dones that report still counts: two ZCOUNTs an engine, an eighth of a pick at
-- 16 engines, though those keys change only when a placement or a done touches that engine. A count
-- is kept by key and bound (the engine's load_ms), and used again while it is certainly what ZCOUNT
-- would answer:
-- - the keys counted are written only by these functions. This library forgets a key's count when it
--   writes the key; writes it cannot see (another Lua state: after a FUNCTION LOAD, a restart, a
--   failover and back) are caught by <res>:kept-by, which holds the id of the Lua state whose counts
--   are current: a writing call that finds another id there (or none: it expired, or the keys were
--   deleted) forgets every count of that <res> and writes its own id before it writes anything, so any
--   other writer's first write puts its own id there. A call that cannot write (kvr_peek, a replica)
--   keeps nothing unless the id there is its own;
-- - a key's expiry only ever takes a count to 0: a count of 0 stays valid, a larger one only until
--   EXPIRY_MARGIN_MS before the expiry this library last set on the key (unknown: not used);
-- - bounded: a <res>'s counts dropped whole past COUNTS_CAP keys (~330 bytes of Lua memory each:
--   ~0.7 MB), those of KEPT_CAP <res> at most (views sharing one Redis; past that all dropped, and
--   counted again); <res>:kept-by expires reservation_ttl_ms after it is written (likewise).
local COUNTS_CAP = 2048
local KEPT_CAP = 8
local EXPIRY_MARGIN_MS = 1000
-- The counted keys' kinds: <res>:engine:<engine> (reservations) and <res>:done:<engine> (dones).
local RESERVED, DONE = ':engine:', ':done:'
-- This Lua state's id: TIME's seconds and microseconds at its first writing call, and the address of
-- its kept counts (which tells apart two library instances in one Lua state: the test's).
local state_id
-- <res> -> {size = keys kept, [RESERVED] = engine -> kept, [DONE] = engine -> kept}, where each kept is
-- {count, bound (nil: count again), expires (the key's, as last set here; nil: unknown)}.
local kept, kept_size = {}, 0

-- The kept counts of `res` for this call (nil: none may be kept or used), after the check above.
-- `writing`: the call may write, and claims <res>:kept-by when it is not this state's.
local function kept_counts(res, writing, ttl)
  local owner = redis.call('GET', res .. ':kept-by')
  if state_id and owner == state_id then
    if kept[res] then return kept[res] end
  elseif not writing then
    return nil
  else
    if not state_id then
      local t = redis.call('TIME')
      state_id = t[1] .. '.' .. t[2] .. '.' .. string.match(tostring(kept), '%x+$')
    end
    redis.call('SET', res .. ':kept-by', state_id, 'PX', math.max(1, math.floor(ttl)))
  end
  if not kept[res] then
    if kept_size >= KEPT_CAP then kept, kept_size = {}, 0 end
    kept_size = kept_size + 1
  end
  kept[res] = {size = 0, [RESERVED] = {}, [DONE] = {}}
  return kept[res]
end

-- The kept count of one key of `k`, made when missing.
local function kept_entry(k, kind, engine)
  local entry = k[kind][engine]
  if not entry then
    if k.size >= COUNTS_CAP then k.size, k[RESERVED], k[DONE] = 0, {}, {} end
    entry = {}
    k[kind][engine] = entry
    k.size = k.size + 1
  end
  return entry
end

-- ZCOUNT <res><kind><engine> (bound +inf: from the kept counts `k` when they hold it (see kept_counts).
local function count_after(k, res, kind, engine, bound, now)
  local entry = k and k[kind][engine]
  if entry and entry.bound == bound and (entry.count == 0 or now < (entry.expires or 0) - EXPIRY_MARGIN_MS) then
    return entry.count
  end
  local n = redis.call('ZCOUNT', res .. kind .. engine, bound, '+inf')
  if k then
    entry = entry or kept_entry(k, kind, engine)
    entry.count, entry.bound = n, bound
  end
  return n
end

-- <res><kind><engine> written by this call: its kept count forgotten, and the expiry just set on it
-- (absolute ms; nil: unchanged) remembered.
local function written(res, kind, engine, expires)
  local k = kept[res]
  if not k then return end
  local entry = k[kind][engine]
  if entry then entry.bound = nil end
  if expires then
    entry = entry or kept_entry(k, kind, engine)
    entry.expires = expires
  end
end

-- Removes one reservation everywhere it is counted; 1 when there was one.
local function release(res, request)
  local v = redis.call('HGET', res, request)
  if not v then return 0 end
  local engine, client = string.match(v, '^([^|]*)|[^|]*|[^|]*|(.*)$')
  redis.call('HDEL', res, request)
  redis.call('ZREM', res .. ':by-time', request)
  redis.call('ZREM', res .. RESERVED .. engine, request)
  written(res, RESERVED, engine)
  if client and client ~= '' then
    local key = res .. ':client:' .. client
    if redis.call('HINCRBY', key, engine, -1) <= 0 then redis.call('HDEL', key, engine) end
  end
  return 1
end

-- Holding: with every live engine's slots taken, a request placed now waits on one engine for a
-- slot that engine frees, while another engine may free one first: which ends first is in the
-- running requests' output lengths, which no report carries (BENCHMARKS.md runs 11 and 13). A
-- balancer that offers to hold a request (kvr_pick's hold_ms) is told HOLD instead and asks again
-- (when one of its own requests ends, or after a short pause): the request then takes the first slot
-- freed anywhere — one line for the fleet rather than one per engine. The waiting room, in the head
-- slot beside the reservations:
--   <res>:hold       zset  request id, scored by when it was first held: the order they go in
--   <res>:hold:seen  zset  request id, scored by when its balancer last asked
-- A held request goes in once fewer requests wait ahead of it than there are free slots, or once it
-- has waited hold_ms (then placed as if it had never waited). A balancer asks again only for its
-- oldest held requests (the rest would be told HOLD too) and keeps the others' places with
-- kvr_holding, a cheap call for all of them; a request neither asked for nor kept for HOLD_STALE_MS
-- (its balancer gone) loses its place. kvr_done of a held request removes it; at most HOLD_CAP
-- wait, past that a new request is placed at once. Both keys expire reservation_ttl_ms after their
-- last write.
local HOLD_STALE_MS = 1000
local HOLD_CAP = 4096

-- Leaves the waiting room (a request placed, given up, or gone).
local function unhold(res, request)
  redis.call('ZREM', res .. ':hold', request)
  redis.call('ZREM', res .. ':hold:seen', request)
end

-- True when the request must wait (recorded in the waiting room); false when it is placed now.
local function hold(h, request, hold_ms)
  local key, seen, now = h.res .. ':hold', h.res .. ':hold:seen', h.now
  for _, gone in ipairs(redis.call('ZRANGEBYSCORE', seen, '-inf', '(' .. (now - HOLD_STALE_MS), 'LIMIT', 0, SWEEP)) do
    unhold(h.res, gone)
  end
  local first = tonumber(redis.call('ZSCORE', key, request))
  if first and now - first >= hold_ms then
    unhold(h.res, request)
    return false
  end
  -- Free slots on the engines that take requests; slots not learned yet (no engine has had a request
  -- wait), or no engine that takes requests (none live; or every one BUSY, DRAINING or SUSPECT, whose
  -- freed slots are never counted): no telling when a slot frees, nothing waits.
  local free, taking = 0, false
  for _, e in pairs(h.engines) do
    if e.slots == 0 then return false end
    if e.status ~= 'BUSY' and e.status ~= 'DRAINING' and e.status ~= 'SUSPECT' then
      taking = true
      free = free + math.max(0, e.slots - e.load)
    end
  end
  if not taking then return false end
  local ahead = first and redis.call('ZCOUNT', key, '-inf', '(' .. first) or redis.call('ZCARD', key)
  if ahead < free or (not first and ahead >= HOLD_CAP) then
    if first then unhold(h.res, request) end
    return false
  end
  redis.call('ZADD', key, 'NX', now, request)
  redis.call('ZADD', seen, now, request)
  redis.call('PEXPIRE', key, h.res_ttl)
  redis.call('PEXPIRE', seen, h.res_ttl)
  return true
end

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
    now = now, age = now - tonumber(meta[1]), busy_factor = tonumber(meta[2]) or 2, floor = tonumber(meta[3]) or 0.05,
    client_cap = tonumber(meta[4]) or 1, client_min = tonumber(meta[5]) or 1000000000, chunk = tonumber(meta[6]) or 16,
    kv_bytes = tonumber(meta[7]), prefill_rate = tonumber(meta[8]), fabric = tonumber(meta[9]),
    price = tonumber(meta[10]) or 0, miss_weight = tonumber(meta[11]) or 3,
    res_ttl = tonumber(meta[12]) or DEFAULT_RESERVATION_TTL_MS,
  }
  h.horizon = -math.log(h.floor)
  return h
end

-- The live engines (h.engines; a DECODE pool apart: h.decoders) with their load: the last report's,
-- plus every placement made after the engine measured it (by any balancer: the report does not show
-- it yet), less every request reported done since (which the report still counts). Engines in
-- `avoid` (a set) are left out as if dead: the caller could not reach them. Returns the fewest
-- slots and the longest slot time learned on the way (learn_unknown).
local function read_engines(h, engines_key, avoid, k)
  local res, now = h.res, h.now
  -- Prompts go to BOTH and PREFILL engines; a DECODE pool (disaggregated serving) only takes the
  -- hand-off, so it is kept apart, with its own mean.
  local engines, live, total_load = {}, 0, 0
  local decoders, decode_live, decode_load = {}, 0, 0
  local flat = redis.call('HGETALL', engines_key)
  local fewest, longest
  for i = 1, #flat, 2 do
    local id, e = flat[i], parse_engine(flat[i + 1])
    if not e.gone and not avoid[id] then
      if e.decode_only then
        e.load = e.waiting + e.running
        decoders[id] = e
        decode_live = decode_live + 1
        decode_load = decode_load + e.load
      else
        e.load = math.max(0, e.waiting + e.running + count_after(k, res, RESERVED, id, e.after_report, now)
          - count_after(k, res, DONE, id, e.after_report, now))
        -- The rate the engine prefills at, as its requests showed it; the configured one until known.
        e.rate = e.prefill_rate > 0 and e.prefill_rate or h.prefill_rate
        engines[id] = e
        live = live + 1
        total_load = total_load + e.load
        local slots, slot_ms = e.slots, e.slot_ms
        if slots > 0 and (not fewest or slots < fewest) then fewest = slots end
        if slot_ms > 0 and (not longest or slot_ms > longest) then longest = slot_ms end
      end
    end
  end
  h.engines, h.decoders = engines, decoders
  h.mean = live > 0 and total_load / live or 0
  h.decode_mean = decode_live > 0 and decode_load / decode_live or 0
  return fewest, longest
end

-- Slots and slot times not learned yet, filled in; whether any engine has a slot free (h.free_slots);
-- and how long a full engine takes to free each slot a request placed there waits for (free_ms).
local function learn_unknown(h, fewest, longest)
  local engines, slot_sum, slot_known = h.engines, 0, 0
  h.free_slots = false
  for id, e in pairs(engines) do
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
      local oldest = redis.call('ZRANGE', h.res .. RESERVED .. id, 0, 0, 'WITHSCORES')[2]
      if oldest then e.slot_ms = math.max(0, h.now - tonumber(oldest)) end
    end
    if e.slot_ms > 0 then slot_sum, slot_known = slot_sum + e.slot_ms, slot_known + 1 end
    -- Whether any engine has a slot free (or slots not known yet): when every one is full, waiting
    -- is everywhere and a full engine is no reason to leave the cache.
    if e.slots == 0 or e.load < e.slots then h.free_slots = true end
  end
  -- The fleet's mean slot time over the engine's slots. When a slot frees depends on the running
  -- requests' output lengths, which no report carries; an engine's own mean slot time (its last
  -- completions) is a noisy guess at it, and choosing among full engines by it cost more wait than
  -- counting the requests ahead at one pace (BENCHMARKS.md run 11; the pace of the last
  -- completions, run 7, did worse still). A slower engine still shows: its queue drains slower, so
  -- it stays longer.
  for _, e in pairs(engines) do
    if e.slots > 0 and e.slot_ms > 0 and e.load >= e.slots then
      e.free_ms = slot_sum / slot_known / e.slots
    end
  end
end

-- The prefill every placement sent to an engine (its uncached tokens), as a queue that drains in
-- real time at the engine's rate as known now: how long a new request there waits for its own
-- prefill (h.backlog). Priced at read, so an engine seen slower since the placements (its chunks
-- come slower: EngineTable) has its whole queue stretched at once, not only the prefill placed after.
local function read_backlog(h)
  h.backlog = {}
  if not h.prefill_rate then return end
  local q = redis.call('HGETALL', h.res .. ':prefill')
  for i = 1, #q, 2 do
    local entry = prefill_of(q[i + 1])
    if entry and entry[1] and entry[2] then
      local e = h.engines[q[i]]
      local rate = e and e.rate or h.prefill_rate
      local queued_ms = entry[3] and entry[1] / rate * 1000 or entry[1]
      h.backlog[q[i]] = math.max(0, queued_ms - (h.now - entry[2]))
      -- KV room: what the report showed free, less the prompts placed there and not prefilled yet (each
      -- will hold its blocks once admitted; those admitted already count twice: it errs towards full).
      if e and e.kv_free then e.kv_room = e.kv_free - h.backlog[q[i]] * rate / 1000 end
    end
  end
end

-- The client's live reservations per engine, for the client cap.
local function read_client(h)
  h.inflight, h.client_total = {}, 0
  if h.client == '' then return end
  local c = redis.call('HGETALL', h.res .. ':client:' .. h.client)
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
  h.classes, h.res, h.client = classes_key, res, client
  local fewest, longest = read_engines(h, engines_key, avoid, kept_counts(res, writing, h.res_ttl))
  learn_unknown(h, fewest, longest)
  read_backlog(h)
  read_client(h)
  return h
end

-- Pending values (an HMGET's reply) parsed, each into one flat list of four per entry: its text, its
-- engine, ready_ms and epoch (numbers); parsed once a pick, for the match and the placement's record.
local function pending_entries(values)
  local lists = {}
  for i = 1, #values do
    local list, k = {}, 0
    if values[i] then
      for text, id, ready36, epoch36 in string.gmatch(values[i], HOLDER) do
        list[k + 1], list[k + 2], list[k + 3], list[k + 4] = text, id, tonumber(ready36, 36), tonumber(epoch36, 36)
        k = k + 4
      end
    end
    lists[i] = list
  end
  return lists
end

-- A copy already on its way to `engine` (same cache epoch, in the field's parsed entries `list`)
-- makes the engine a holder when it is done, whichever placement finishes later: when the engine
-- holds the prefix, `mine` or sooner.
local function ready_with_copy(list, engine, epoch, mine, now)
  for j = 1, #list, 4 do
    if list[j + 1] == engine then
      local stored = list[j + 2]
      if list[j + 3] == epoch and stored + PENDING_MS > now then mine = math.min(mine, math.max(stored, now)) end
      break
    end
  end
  return mine
end

-- A pending field's new text, with `own` (the engine's entry, ready at `mine`) in its place, and when
-- its last holder is ready. Entries are written latest-ready first, so one pass keeps that order: the
-- other engines' entries as written (re-encoding each in base 36 was most of a placement's cost),
-- this one's put in its place, up to PENDING_HOLDERS, stopping at the first expired.
local function pending_field(list, engine, own, mine, now)
  local parts, last = {}, mine
  for j = 1, #list, 4 do
    if #parts >= PENDING_HOLDERS then break end
    local stored = list[j + 2]
    if stored + PENDING_MS <= now then break end
    if list[j + 1] ~= engine then
      if own and stored < mine then
        parts[#parts + 1] = own
        own = nil
        if #parts >= PENDING_HOLDERS then break end
      end
      parts[#parts + 1] = list[j]
      if stored > last then last = stored end
    end
  end
  if own and #parts < PENDING_HOLDERS then parts[#parts + 1] = own end
  return table.concat(parts, ','), last
end

-- Keeps the pending prefixes bounded: expired block hashes swept (at most SWEEP a call), then past
-- PENDING_CAP the soonest to expire; both keys live until the latest holder expires (`ttl`): a TTL
-- is set when there is none (NX) and otherwise only ever extended (GT), so a placement ready sooner
-- does not cut a later one short.
local function trim_pending(key, by_time, now, ttl)
  for _, old in ipairs(redis.call('ZRANGEBYSCORE', by_time, '-inf', '(' .. now, 'LIMIT', 0, SWEEP)) do
    redis.call('HDEL', key, old)
    redis.call('ZREM', by_time, old)
  end
  local over = redis.call('ZCARD', by_time) - PENDING_CAP
  if over > 0 then
    for _, old in ipairs(redis.call('ZRANGE', by_time, 0, over - 1)) do
      redis.call('HDEL', key, old)
      redis.call('ZREM', by_time, old)
    end
  end
  for _, k in ipairs({key, by_time}) do
    redis.call('PEXPIRE', k, ttl, 'NX')
    redis.call('PEXPIRE', k, ttl, 'GT')
  end
end

-- Records that `engine` will hold the prompt's sampled prefixes from `ready` on (h.sampled: the
-- prompt's hashes at the sampled positions h.at). A holder leaves PENDING_MS after it is ready, a
-- block hash keeps PENDING_HOLDERS, the hash PENDING_CAP block hashes. The first `held` blocks the
-- engine holds already (the run the placement matched there): they are ready now, only the blocks
-- the placement brings wait for its prefill. (Marking the whole prompt as still being computed hid
-- a burst's holder from the next requests, which went cold elsewhere: run 10.)
local function pend(h, engine, ready, held)
  local key, now = h.res .. ':pending', h.now
  local epoch = h.engines[engine].epoch_number
  local epoch36 = to36(epoch)
  -- Each position's ready_ms is mostly one of two times (now, or when the prefill is done): turned
  -- into base 36 once each (to36 is ~2 µs, a tenth of the record's cost when done per position).
  local text36 = {}
  -- The pick read and parsed these fields already when it matched them (nothing writes between).
  local lists = h.pending_entries or pending_entries(redis.call('HMGET', key, unpack(h.sampled)))
  -- Every field in one HSET and one ZADD (the same end state as a write per field, a tenth of the calls).
  local values, scores = {}, {}
  for i, field in ipairs(h.sampled) do
    local mine = ready_with_copy(lists[i], engine, epoch, h.at[i] <= held and now or ready, now)
    local mine36 = text36[mine]
    if not mine36 then
      mine36 = to36(mine)
      text36[mine] = mine36
    end
    local text, last = pending_field(lists[i], engine, engine .. '=' .. mine36 .. '.' .. epoch36, mine, now)
    values[#values + 1] = field
    values[#values + 1] = text
    scores[#scores + 1] = last + PENDING_MS
    scores[#scores + 1] = field
  end
  redis.call('HSET', key, unpack(values))
  redis.call('ZADD', key .. ':by-time', unpack(scores))
  trim_pending(key, key .. ':by-time', now, ready - now + PENDING_MS)
end

-- The runs pending placements bring (see PENDING_MS), merged into the view's match: an engine's run
-- is the longer of the two; a pending run is taken as certain (confidence 1). h.sampled holds the
-- prompt's hashes at the sampled positions `at`. Engines a placed copy is still being computed on
-- go in h.warming (engine -> run).
local function match_pending(h, at, depth, conf)
  h.warming = {}
  if not h.sampled or #h.sampled == 0 then return depth, conf end
  local lists = pending_entries(redis.call('HMGET', h.res .. ':pending', unpack(h.sampled)))
  h.pending_entries = lists
  for i = #lists, 1, -1 do
    local list = lists[i]
    for j = 1, #list, 4 do
      local id, ready = list[j + 1], list[j + 2]
      local e = h.engines[id]
      local current = e and list[j + 3] == e.epoch_number
      if current and ready <= h.now and h.now < ready + PENDING_MS and at[i] > (depth[id] or 0) then
        depth[id] = at[i]
        conf[id] = 1
      elseif current and ready > h.now and at[i] > (depth[id] or 0) and at[i] > (h.warming[id] or 0) then
        -- Still computing blocks it does not hold: a copy on its way there.
        h.warming[id] = at[i]
      end
    end
  end
  return depth, conf
end

-- Records the placement as a reservation (request id '' records nothing) and keeps the
-- reservations bounded: expired ones leave (at most SWEEP a call), each engine keeps RESERVATION_CAP.
local function reserve(h, result, request, n)
  local engine = result[1]
  if request == '' or engine == '' then return end
  local res, now, ttl = h.res, h.now, h.res_ttl
  release(res, request) -- a request id sent again replaces its reservation instead of counting twice
  -- The prefill it queues there: the prompt less what the placement expects to find cached (answer
  -- 7 of a HIT: a run the queue ahead evicts first is computed again, see kept in decide).
  local tokens = math.max(0, n * h.chunk - (result[6] == 'HIT' and result[7] or 0))
  local by_engine = res .. RESERVED .. engine
  redis.call('HSET', res, request, engine .. '|' .. now .. '|' .. tokens .. '|' .. h.client)
  redis.call('ZADD', res .. ':by-time', now, request)
  redis.call('ZADD', by_engine, now, request)
  if h.client ~= '' then
    local key = res .. ':client:' .. h.client
    redis.call('HINCRBY', key, engine, 1)
    redis.call('PEXPIRE', key, ttl)
  end
  local ready = now
  if h.prefill_rate then
    local rate = h.engines[engine].rate
    local queued = (h.backlog[engine] or 0) + tokens / rate * 1000
    ready = now + math.ceil(queued)
    redis.call('HSET', res .. ':prefill', engine, string.format('t%.1f|%d', queued * rate / 1000, now))
    -- An engine whose queue drained long ago leaves the hash (engines come and go).
    for id, left in pairs(h.backlog) do
      if left == 0 and id ~= engine and not h.engines[id] then redis.call('HDEL', res .. ':prefill', id) end
    end
    redis.call('PEXPIRE', res .. ':prefill', ttl)
  end
  for _, old in ipairs(redis.call('ZRANGEBYSCORE', res .. ':by-time', '-inf', '(' .. (now - ttl), 'LIMIT', 0, SWEEP)) do
    release(res, old)
  end
  local over = redis.call('ZCARD', by_engine) - RESERVATION_CAP
  if over > 0 then
    for _, old in ipairs(redis.call('ZRANGE', by_engine, 0, over - 1)) do release(res, old) end
  end
  redis.call('PEXPIRE', res, ttl)
  redis.call('PEXPIRE', res .. ':by-time', ttl)
  redis.call('PEXPIRE', by_engine, ttl)
  written(res, RESERVED, engine, now + ttl)
  -- Without a prefill rate there is no telling when the engine holds the prompt: nothing pending.
  if h.prefill_rate and h.sampled and #h.sampled > 0 then pend(h, engine, ready, result[2]) end
end

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
-- What a stage works out for one engine is kept in h for the rest of the pick (h.waits, h.refusals).

-- Filters. Each answers nil when the engine may take the request, else the reason it spills with.

-- Takes no new requests: BUSY, DRAINING, or SUSPECT (silent for a while: it keeps its entries but
-- gets no new affinity either).
local function unavailable(e)
  local status = e.status
  if status == 'BUSY' or status == 'DRAINING' or status == 'SUSPECT' then return 'SPILL_BUSY' end
  return nil
end

-- Where the cost can price what a full or hot engine costs a request there (the prefill rate, the
-- engine's slots and slot time known: the prefill queued ahead of it, the wait for a slot), neither
-- turns a holder away by itself: an engine with a free slot may have seconds of cold prefills
-- queued. Until then the two load thresholds below do.
local function unpriced(h, e)
  return not (h.prefill_rate and e.slots > 0 and e.slot_ms > 0)
end

-- Every slot taken (the engine's requests, with the placements since its report, fill the slots it
-- was last seen full at) while some engine has one free: a request placed here waits for another to
-- finish, seconds of decode, while an engine with a free slot only has to prefill what it lacks.
local function full(h, e)
  if e.slots > 0 and e.load >= e.slots and h.free_slots then return 'SPILL_BUSY' end
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
  if counted > h.busy_factor * math.max(h.mean, 1) then return 'SPILL_HOT' end
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
  if ((h.inflight[id] or 0) + 1) / (h.client_total + 1) > h.client_cap then return 'SPILL_CLIENT_CAP' end
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
    w = math.max(queue_wait(h, id), slot_wait(e), kv_room_wait(h, e))
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

local function cost(h, id, runs)
  return wait(h, id) + uncached_ms(h, id, runs)
end

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

-- The engine no filter refuses where the request costs the least, given each engine's run; nil when
-- every engine is refused.
local function soonest(h, runs)
  local least, costs = math.huge, {}
  for id in pairs(h.engines) do
    if not refused(h, id) then
      local t = cost(h, id, runs)
      costs[id] = t
      if t < least then least = t end
    end
  end
  local best
  local within = least + SAME_DELAY * least
  for id, t in pairs(costs) do
    if t <= within and (not best or before(h, id, best, runs)) then best = id end
  end
  return best
end

-- The engine the request would go to with nobody's cache counted (the least cost over the whole
-- prompt; ties: the lower load, then the id), or false: what the added wait is measured from.
local NO_RUNS = {}
local function blind(h)
  if h.blind == nil then
    local best, best_cost = false, nil
    for id, e in pairs(h.engines) do
      if not refused(h, id) then
        local u = cost(h, id, NO_RUNS)
        local b = best and h.engines[best]
        if not best or u < best_cost or (u == best_cost and (e.load < b.load or (e.load == b.load and id < best))) then
          best, best_cost = id, u
        end
      end
    end
    h.blind = best
  end
  return h.blind
end

-- The cost side of the answer: how much longer the request waits to start on the chosen engine than
-- on the blind choice. Affinity is taken only where uncached_prefill_weight x the prefill it skips
-- outweighs this: the two figures a placement is judged by. Unpriced (no prefill rate) or on a view
-- too old to trust, a placement adds nothing it could measure.
local function added_wait(h, id)
  if not h.prefill_rate or h.age > h.max_age or not h.engines[id] then return 0 end
  local b = blind(h)
  return b and math.max(0, wait(h, id) - wait(h, b)) or 0
end

-- On load alone (a view too old to trust, no prompt, no prefill rate, or no engine the cost may
-- choose): the least loaded engine no filter refuses, else the least loaded not overloaded (the
-- client cap given up), else the least loaded live engine; '' with none.
local function lowest_load(h, skip)
  local best, best_load = '', math.huge
  for id, e in pairs(h.engines) do
    if not (skip and skip(h, id)) and (e.load < best_load or (e.load == best_load and id < best)) then best, best_load = id, e.load end
  end
  return best
end
local function least_loaded(h)
  local best = lowest_load(h, refused)
  if best == '' then best = lowest_load(h, overloaded) end
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

-- A client's burst grows a copy of its prompt before the holders fill: a holder with a free slot
-- costs a request nothing, so without this the burst stays on the first holders until every slot
-- there is taken, and only then pays a cold copy elsewhere, behind which the next requests stack
-- while the holders' requests wait seconds for slots. Once the client has client_min requests in
-- flight and no copy is being computed, one request goes cold to a spare (spare_engine) if every
-- holder of the prompt is filling (holders_filling). Once computed the copy is the least loaded
-- holder and the burst spreads there. Other clients' prompts (a conversation's next turn) are never
-- copied this way.
-- The spare: an engine that holds none of the prompt, has no prefill queued and, slots known, at
-- least SPARE_FREE of them free; the least cost, then the lower load and id.
local function spare_engine(h)
  local spare, spare_cost
  for id, e in pairs(h.engines) do
    if not h.runs[id] and (h.backlog[id] or 0) == 0 and (e.slots == 0 or e.slots - e.load >= SPARE_FREE * e.slots)
        and not refused(h, id) then
      local c = cost(h, id, h.runs)
      local s = spare and h.engines[spare]
      if not spare or c < spare_cost or (c == spare_cost and (e.load < s.load or (e.load == s.load and id < spare))) then
        spare, spare_cost = id, c
      end
    end
  end
  return spare
end
-- Every holder of the prompt is filling: with this request it has used WARM_AT of its slots, or,
-- while its slots are not known yet (a fleet's first seconds: slots are learned when an engine first
-- queues), it carries busy_factor times the spare's load (each plus this request).
local function holders_filling(h, spare)
  for id in pairs(h.runs) do
    local e = h.engines[id]
    if near_best(h, id) then
      local filling
      if e.slots > 0 then
        filling = e.load + 1 >= WARM_AT * e.slots
      else
        filling = e.load + 1 >= h.busy_factor * (h.engines[spare].load + 1)
      end
      if not filling then return false end
    end
  end
  return true
end
local function spare_for_burst(h)
  if not h.prefill_rate or h.client == '' or h.client_total + 1 < h.client_min then return nil end
  -- A copy on its way (a pending run is a lower bound within 2x of the shared run: see PENDING_MS).
  for id, run in pairs(h.warming) do
    if h.engines[id] and run * 2 >= h.best_run then return nil end
  end
  local spare = spare_engine(h)
  if spare and holders_filling(h, spare) then return spare end
  return nil
end

-- Disaggregated serving: the least loaded decode engine that is ready and not hot (else the least
-- loaded), and the whole prompt's KV hand-off to it, on the TTFT path whatever the cache saved.
local function decode_handoff(h, result)
  local best, best_load, fallback, fallback_load = '', math.huge, '', math.huge
  for id, e in pairs(h.decoders) do
    if e.load < fallback_load or (e.load == fallback_load and id < fallback) then fallback, fallback_load = id, e.load end
    local fit = e.status == 'READY' and not (e.load > h.busy_factor * math.max(h.decode_mean, 1))
    if fit and (e.load < best_load or (e.load == best_load and id < best)) then best, best_load = id, e.load end
  end
  if best == '' then best = fallback end
  local handoff_ms = 0
  if best ~= '' and h.kv_bytes and h.fabric then handoff_ms = h.n * h.chunk * h.kv_bytes / h.fabric * 1000 end
  result[10] = best
  result[11] = string.format('%.1f', handoff_ms)
  return result
end

-- The answer (see decide for its fields), with the cost view: what the placement is expected to
-- save. A hit skips the matched prefill as far as the run outlasts the prefill queued ahead (kept);
-- when the request lands away from the best holder, moving that holder's KV pays if it is faster
-- than recomputing it (a transfer); else it is a cold start.
local function answer(h, id, run, reason, confidence)
  local result = {id, run, reason, h.age, confidence or '0'}
  local outcome, tokens, saved_ms = 'COLD', 0, 0
  local rate = h.engines[id] and h.engines[id].rate or h.prefill_rate
  if run > 0 then
    outcome, tokens = 'HIT', math.floor(run * h.chunk * kept(h, id) + 0.5)
    if rate then saved_ms = tokens / rate * 1000 end
  elseif h.best_run > 0 and h.kv_bytes and rate and h.fabric then
    local t = h.best_run * h.chunk
    local transfer_ms = t * h.kv_bytes / h.fabric * 1000
    local prefill_ms = t / rate * 1000
    if transfer_ms < prefill_ms then
      outcome, tokens, saved_ms = 'TRANSFER', t, prefill_ms - transfer_ms
    end
  end
  result[6] = outcome
  result[7] = tokens
  result[8] = string.format('%.6f', tokens * h.price / 1000000)
  result[9] = string.format('%.1f', saved_ms)
  result[12] = h.best_run
  result[13] = string.format('%.1f', added_wait(h, id))
  return decode_handoff(h, result)
end

-- A placement on an engine that may hold a run of the prompt: REPLICA when it does, else `spilled`.
local function placed(h, id, spilled)
  local d = h.runs[id] or 0
  if d > 0 then return answer(h, id, d, 'REPLICA', string.format('%.4f', h.conf[id])) end
  return answer(h, id, 0, spilled)
end

-- The rules, in order. match() returns each holder's longest consecutive run of blocks from the
-- first and its confidence; it is called only when the view is fresh enough, also for a class
-- whose affinity is off (what affinity would have matched is the evidence that turns it back on).
-- Returns: engine, matched blocks, reason, view age ms, confidence (string), expected outcome (HIT,
--          TRANSFER, COLD), prompt tokens it saves recomputing, their price in dollars (string),
--          prefill milliseconds saved (string), decode engine ('' unless the fleet has a DECODE
--          pool), prefill-to-decode hand-off ms on the TTFT path (string), the blocks the best
--          holder matches whichever engine was chosen (what affinity would match), and the wait it
--          adds (string, ms; added_wait). The saving and the added wait are what decided.
local function decide(h, n, class, max_age, match)
  h.n, h.max_age, h.best_run, h.runs, h.waits, h.refusals = n, max_age, 0, NO_RUNS, {}, {}
  if h.age > max_age or n == 0 then
    return answer(h, least_loaded(h), 0, h.age > max_age and 'FALLBACK_LOAD_ONLY' or 'COLD')
  end
  local runs, conf = match()
  h.runs, h.conf = runs, conf
  for _, d in pairs(runs) do
    if d > h.best_run then h.best_run = d end
  end
  -- A class an operator turned off (the job never does: the cost prices affinity per request) is
  -- placed as if nobody held its prompt; the best holder's match still goes back with the answer.
  if class ~= '' and redis.call('HGET', h.classes, class) == 'off' then
    return answer(h, h.prefill_rate and soonest(h, NO_RUNS) or least_loaded(h), 0, 'NO_AFFINITY_CLASS')
  end
  -- Nobody holds it: the least cost (cold copies placed together would wait on each other's prefill).
  if next(runs) == nil then return answer(h, h.prefill_rate and soonest(h, runs) or least_loaded(h), 0, 'COLD') end
  local first = best_holder(h)
  local why = refused(h, first)
  if not why then
    local spare = spare_for_burst(h)
    if spare then return placed(h, spare, 'SPILL_HOT') end
    -- Another engine takes the request from the best holder only at strictly less cost (prefill
    -- queued on the holder, its slots all taken, or a holder that prefills slower than the others).
    local best = h.prefill_rate and soonest(h, runs)
    if best and cost(h, best, runs) < cost(h, first, runs) then return placed(h, best, 'SPILL_BUSY') end
    return answer(h, first, runs[first], 'AFFINITY', string.format('%.4f', conf[first]))
  end
  -- The best holder cannot take it: the least cost elsewhere (another holder's run and every
  -- engine's queued prefill weigh in, so spilled requests do not stack cold prefills of the same
  -- prompt on one engine); without the prefill rate, the next holder by rank.
  if h.prefill_rate then
    local best = soonest(h, runs)
    if best then return placed(h, best, why) end
  else
    local id = next_holder(h)
    if id then return answer(h, id, runs[id], 'REPLICA', string.format('%.4f', conf[id])) end
  end
  return answer(h, least_loaded(h), 0, why)
end

local NO_VIEW = {'', 0, 'NO_VIEW', -1, '0', 'COLD', 0, '0', '0', '', '0', 0, '0'}

-- The answer to a request told to wait: no engine, reason HOLD; it asks again.
local function hold_answer(h)
  return {'', 0, 'HOLD', h.age, '0', 'COLD', 0, '0', '0', '', '0', 0, '0'}
end

-- Whether a request offered to wait (hold_ms, '' or 0: never) must: only with a request id to
-- place it under, and on a fresh view (a stale one's loads say nothing of free slots).
local function held(h, request, hold_ms, max_age)
  hold_ms = tonumber(hold_ms) or 0
  if hold_ms <= 0 or request == '' or h.age > max_age then return false end
  return hold(h, request, hold_ms)
end

-- The longest run of the prompt's blocks each engine holds, from the first block on, read from the
-- view's groups without reading every block. A block's chain hash names the whole prefix up to it, an
-- engine that stored block k held blocks 1..k-1 when it did, and engines evict leaves first: an engine
-- holds block k only if it holds the run up to k (the prefix property). So each engine's run ends
-- where its entries stop, found by probing: the sampled positions 1, 2, 4, ... below n, and n (one
-- HMGET, the hashes the pending prefixes use too), then bisection between the last held and the first
-- not held, every engine's next probe read in one HMGET per round: about 2 log2(n) blocks, not n.
-- Where the view breaks the property (an entry missing or lapsed before a later one of the same
-- engine: redis-sink/README.md, "The match"), the run ends at such a hole only if a probe lands on it.
-- `hash(k)` is the prompt's block hash at position k; h.at holds the sampled positions (sampled(n)).

-- An entry counts while its confidence exp(-age/tau) (halved for an unsynced engine) is at least the
-- floor and its age at most the horizon: its confidence, else nil.
local function confidence(h, e, stored)
  local x = (h.now - stored) / e.tau
  local c = math.exp(-x)
  if e.unsynced then c = c * 0.5 end
  if c < h.floor or x > h.horizon then return nil end
  return c
end

-- The holders of block 1 that count: each a run of 1 (depth, conf), and a search for its end (the
-- list returned: lead and mid find its entry in a block field, limit and band test it; see held_at).
local function first_block(h, group1, hash, depth, conf)
  local searches = {}
  for id, entry in pairs(holders(redis.call('HGET', group1, hash(1)))) do
    local e = h.engines[id]
    local c = e and entry.epoch == e.epoch and confidence(h, e, entry.stored)
    if c then
      depth[id] = 1
      conf[id] = c
      -- The same test as confidence() without exp() for every probe: age/tau against the limit it
      -- implies, with the exact test where the two could round apart (and for a time ahead of now).
      local limit = math.min(h.horizon, math.log((e.unsynced and 0.5 or 1) / h.floor))
      searches[#searches + 1] = {id = id, e = e, lead = id .. '=', mid = ',' .. id .. '=', epoch = e.epoch_number,
        limit = limit, band = 1e-9 * math.max(1, math.abs(limit)), lo = 1}
    end
  end
  return searches
end

-- Reads the block fields at `positions` not read yet (values: position -> field, false when nobody
-- holds the block), in one HMGET.
local function read_blocks(group_rest, hash, values, positions)
  local fields, wanted = {}, {}
  for _, p in ipairs(positions) do
    if values[p] == nil and not wanted[p] then
      wanted[p] = true
      fields[#fields + 1] = p
    end
  end
  if #fields == 0 then return end
  local names = {}
  for i, p in ipairs(fields) do names[i] = hash(p) end
  local got = redis.call('HMGET', group_rest, unpack(names))
  for i, p in ipairs(fields) do values[p] = got[i] end
end

-- The searched engine's entry at position p when it counts (its stored_ms), else nil.
local function held_at(h, s, v)
  if not v then return nil end
  local stored36, epoch36 = holder_of(v, s.lead, s.mid)
  if not stored36 or tonumber(epoch36, 36) ~= s.epoch then return nil end
  local stored = tonumber(stored36, 36)
  local x = (h.now - stored) / s.e.tau
  if x >= 0 and x < s.limit - s.band then return stored end
  if x >= 0 and x > s.limit + s.band then return nil end
  return confidence(h, s.e, stored) and stored or nil
end

local function match_in_view(h, group1, group_rest, n, hash)
  local depth, conf = {}, {}
  local searches = first_block(h, group1, hash, depth, conf)
  if n < 2 or #searches == 0 then return depth, conf end
  local values, at = {}, h.at -- block fields read so far, by position; sampled(n), worked out by the caller
  read_blocks(group_rest, hash, values, at)
  local open = {}
  for _, s in ipairs(searches) do
    for i = 2, #at do
      local stored = held_at(h, s, values[at[i]])
      if not stored then s.hi = at[i]; break end
      s.lo, s.stored = at[i], stored
    end
    if s.hi and s.hi - s.lo > 1 then open[#open + 1] = s end
  end
  -- Bisection, one HMGET a round for every engine still searching.
  while #open > 0 do
    local mids = {}
    for i, s in ipairs(open) do
      s.probe = math.floor((s.lo + s.hi) / 2)
      mids[i] = s.probe
    end
    read_blocks(group_rest, hash, values, mids)
    local still = {}
    for _, s in ipairs(open) do
      local stored = held_at(h, s, values[s.probe])
      if stored then s.lo, s.stored = s.probe, stored else s.hi = s.probe end
      if s.hi - s.lo > 1 then still[#still + 1] = s end
    end
    open = still
  end
  -- A longer run's confidence: that of its last block.
  for _, s in ipairs(searches) do
    depth[s.id] = s.lo
    if s.stored then conf[s.id] = confidence(h, s.e, s.stored) end
  end
  return depth, conf
end

-- The engines of a comma-separated list, as a set ('' or nil: none).
local function engine_set(list)
  local set = {}
  for id in string.gmatch(list or '', '[^,]+') do set[id] = true end
  return set
end

-- The arguments, checked before anything is read or written: a call that cannot be right (a
-- number that is not a whole one in range, hashes that are not 16 hex digits each, runs no match
-- could give, an id or label too long, an argument more than the function takes) is refused whole,
-- with the reason, and leaves every key as it was. What is accepted can neither loop (n bounds
-- every loop over the prompt), nor wait forever (hold_ms is bounded), nor queue a prefill that is
-- not a real time (n and the runs bound the uncached tokens).
local MAX_VIEW_AGE_MS, MAX_BLOCKS, MAX_HOLD_MS, MAX_ID, MAX_AVOID = 1e12, 65536, 600000, 1024, 65536

-- A whole number written in decimal digits, at most `max`; nil otherwise.
local function whole(v, max)
  if type(v) ~= 'string' or #v == 0 or #v > 15 or string.find(v, '[^0-9]') then return nil end
  local x = tonumber(v)
  if x > max then return nil end
  return x
end

-- A value as an error message shows it: at most 40 characters of it.
local function shown(v)
  if v == nil then return 'nothing' end
  return #v > 40 and ("'" .. string.sub(v, 1, 40) .. "...' (" .. #v .. ' characters)') or ("'" .. v .. "'")
end

-- The arguments every placement takes first: max_view_age_ms, prefix class, client id, request id, n.
-- Returns n, or nil and what is wrong.
local function placement_arguments(args, least)
  if #args < least then return nil, string.format('expected at least %d arguments, got %d', least, #args) end
  if not whole(args[1], MAX_VIEW_AGE_MS) then return nil, 'max_view_age_ms must be a whole number of ms up to 10^12, got ' .. shown(args[1]) end
  for i, name in ipairs({'the prefix class', 'the client id', 'the request id'}) do
    if #args[i + 1] > MAX_ID then return nil, name .. ' is over ' .. MAX_ID .. ' characters: ' .. shown(args[i + 1]) end
  end
  local n = whole(args[5], MAX_BLOCKS)
  if not n then return nil, 'n must be a whole number of blocks up to ' .. MAX_BLOCKS .. ', got ' .. shown(args[5]) end
  return n
end

-- The optional tail every placement takes last, from position `at`: the engines to avoid, hold_ms.
local function tail_arguments(args, at)
  if #args > at + 1 then return string.format('expected at most %d arguments, got %d', at + 1, #args) end
  if args[at] and #args[at] > MAX_AVOID then return 'the engines to avoid are over ' .. MAX_AVOID .. ' characters' end
  local hold = args[at + 1]
  if hold and hold ~= '' and not whole(hold, MAX_HOLD_MS) then
    return 'hold_ms must be empty or a whole number of ms up to ' .. MAX_HOLD_MS .. ', got ' .. shown(hold)
  end
  return nil
end

-- keys (found from the one key kvr_pick takes, see pick_keys): meta, engines, group of block 1, group
-- of blocks 2..n, class switches, reservations
-- ARGV: max_view_age_ms, prefix class ('' for none), client id ('' for none), request id ('' to
--       reserve nothing), n, the prompt's n block hashes as one argument (16 hex digits each, one
--       after the other: the pick reads only the blocks it probes, and one argument costs Redis one
--       string where n arguments cost n), then optionally the engines to avoid, comma-separated: a
--       balancer that could not reach its pick asks again without it (under the same request id, the
--       reservation moves; '' for none), then optionally hold_ms: how long the balancer will hold
--       the request while every engine is full (see HOLD_STALE_MS; '' or 0: never)
-- Returns: see decide; a request told to wait gets no engine and the reason HOLD.
local function pick_with(keys, args, reserving)
  local fn = reserving and 'kvr_pick' or 'kvr_peek'
  if #keys ~= 6 then return redis.error_reply(string.format('ERR %s: expected 6 keys, got %d', fn, #keys)) end
  local n, wrong = placement_arguments(args, 6)
  if not n then return redis.error_reply('ERR ' .. fn .. ': ' .. wrong) end
  local packed = args[6]
  if #packed ~= 16 * n then
    -- A layout-7 client sends each hash as its own argument: refused, saying what to send.
    return redis.error_reply(string.format('ERR %s (layout %d): expected n=%s block hashes as one argument of 16*n hex '
      .. 'digits, got %d characters; a client older than layout %d must be upgraded', fn, LAYOUT, tostring(args[5]), #packed, LAYOUT))
  end
  if string.find(packed, '[^0-9a-f]') then
    return redis.error_reply('ERR ' .. fn .. ': the block hashes must be lowercase hex digits, got ' .. shown(packed))
  end
  wrong = tail_arguments(args, 7)
  if wrong then return redis.error_reply('ERR ' .. fn .. ': ' .. wrong) end
  local function hash(k) return string.sub(packed, 16 * k - 15, 16 * k) end
  local now = now_ms()
  local h = read_head(keys[1], keys[2], keys[5], keys[6], args[3], now, engine_set(args[7]), reserving)
  if not h then return NO_VIEW end
  if reserving and held(h, args[4], args[8], tonumber(args[1])) then return hold_answer(h) end
  local at = sampled(n)
  h.at, h.sampled = at, {}
  for i, p in ipairs(at) do h.sampled[i] = hash(p) end
  local result = decide(h, n, args[2], tonumber(args[1]), function()
    local depth, conf = match_in_view(h, keys[3], keys[4], n, hash)
    return match_pending(h, at, depth, conf)
  end)
  if reserving then reserve(h, result, args[4], n) end
  return result
end

-- Redis Cluster: the balancer matched the prompt against the groups itself (they sit in other
-- slots) and places it here, in the head slot, in a second round trip.
-- keys (found from the one key kvr_place takes): meta, engines, class switches, reservations
-- ARGV: max_view_age_ms, prefix class, client id, request id ('' to reserve nothing), n,
--       the holders' runs: engine=depth:confidence,... ('' for none), then optionally the prompt's
--       hashes at the sampled positions 1, 2, 4, ... below n, and n (the pending prefixes; without
--       them the placement neither reads nor records any), then optionally the engines to avoid and
--       hold_ms (as kvr_pick's)
local function place(keys, args)
  if #keys ~= 4 then return redis.error_reply(string.format('ERR kvr_place: expected 4 keys, got %d', #keys)) end
  local n, wrong = placement_arguments(args, 6)
  if not n then return redis.error_reply('ERR kvr_place: ' .. wrong) end
  local at = sampled(n)
  local runs = {}
  for run in string.gmatch(args[6], '[^,]+') do
    local id, d, c = string.match(run, '^([^,=:]+)=(%d+):([%d.eE+-]+)$')
    local depth, confidence = whole(d, n), tonumber(c)
    if not depth or not confidence or not (confidence >= 0 and confidence <= 1) then
      return redis.error_reply('ERR kvr_place: a run must be engine=depth:confidence, depth at most n (' .. n
        .. '), confidence in [0, 1]; got ' .. shown(run))
    end
    runs[#runs + 1] = {id, depth, confidence}
  end
  if string.find(args[6], ',,') or string.find(args[6], '^,') or string.find(args[6], ',$') then
    return redis.error_reply('ERR kvr_place: the runs are engine=depth:confidence separated by commas, got ' .. shown(args[6]))
  end
  if #args > 6 then
    if #args < 6 + #at then
      return redis.error_reply(string.format('ERR kvr_place: the prompt\'s hashes at the sampled positions come all %d or none, got %d',
        #at, #args - 6))
    end
    for i = 7, 6 + #at do
      if #args[i] ~= 16 or string.find(args[i], '[^0-9a-f]') then
        return redis.error_reply('ERR kvr_place: a sampled block hash must be 16 lowercase hex digits, got ' .. shown(args[i]))
      end
    end
    wrong = tail_arguments(args, 7 + #at)
    if wrong then return redis.error_reply('ERR kvr_place: ' .. wrong) end
  end
  local now = now_ms()
  local h = read_head(keys[1], keys[2], keys[3], keys[4], args[3], now, engine_set(args[7 + #at]), true)
  if not h then return NO_VIEW end
  if held(h, args[4], args[8 + #at], tonumber(args[1])) then return hold_answer(h) end
  h.at = at
  if #args >= 6 + #at then h.sampled = {unpack(args, 7, 6 + #at)} end
  local result = decide(h, n, args[2], tonumber(args[1]), function()
    local depth, conf = {}, {}
    for _, run in ipairs(runs) do
      if h.engines[run[1]] then depth[run[1]] = run[2]; conf[run[1]] = run[3] end
    end
    return match_pending(h, at, depth, conf)
  end)
  reserve(h, result, args[4], n)
  return result
end

-- keys (found from the one key kvr_done takes): engines, reservations; ARGV: request ids. The
-- requests are done (or were never sent): their reservations leave, and a request its engine's last
-- load report counted is one less there until the engine reports again; a request still held leaves
-- the waiting room. Returns how many reservations there were.
local function done(keys, args)
  if #keys ~= 2 then return redis.error_reply(string.format('ERR kvr_done: expected 2 keys, got %d', #keys)) end
  for i = 1, #args do
    if #args[i] > MAX_ID then return redis.error_reply('ERR kvr_done: a request id is over ' .. MAX_ID .. ' characters: ' .. shown(args[i])) end
  end
  local engines_key, res = keys[1], keys[2]
  local now = now_ms()
  local released = 0
  -- Claimed before anything is written (see kept_counts); the TTL is the default's, as no meta is read.
  kept_counts(res, true, DEFAULT_RESERVATION_TTL_MS)
  for i = 1, #args do
    unhold(res, args[i])
    local v = redis.call('HGET', res, args[i])
    if v then
      local engine, at = string.match(v, '^([^|]*)|(%d+)|')
      local entry = redis.call('HGET', engines_key, engine)
      if entry and tonumber(at) <= parse_engine(entry).load_ms then
        local key = res .. DONE .. engine
        redis.call('ZADD', key, now, args[i])
        redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. (now - DONE_KEEP_MS))
        redis.call('PEXPIRE', key, DONE_KEEP_MS)
        written(res, DONE, engine, now + DONE_KEEP_MS)
      end
      released = released + release(res, args[i])
    end
  end
  return released
end

-- KEYS: reservations; ARGV: request ids a balancer still holds: they keep their places in the waiting
-- room (see HOLD_STALE_MS). Returns how many were there.
local function holding(keys, args)
  if #keys ~= 1 then return redis.error_reply(string.format('ERR kvr_holding: expected 1 key, got %d', #keys)) end
  for i = 1, #args do
    if #args[i] > MAX_ID then return redis.error_reply('ERR kvr_holding: a request id is over ' .. MAX_ID .. ' characters: ' .. shown(args[i])) end
  end
  local res = keys[1]
  local seen = res .. ':hold:seen'
  local now = now_ms()
  local kept = 0
  for i = 1, #args do
    if redis.call('ZSCORE', seen, args[i]) then
      redis.call('ZADD', seen, now, args[i])
      kept = kept + 1
    end
  end
  return kept
end

-- Layout 9: every function is called with one key, the reservations key <prefix>{head}:res, and
-- finds the view's keys from it. Redis checks every key given to FCALL as one the caller may write
-- (FCALL_RO: read), and a key a script reaches by name command by command, as that command uses it;
-- so declaring only the key a call writes lets a balancer's ACL user write its reservations and
-- only read the view (README, "Security": the shipped Redis users). On Redis Cluster the head keys share
-- the reservations key's slot (hash tag {head}); kvr_pick and kvr_peek also read the prompt's two
-- groups, which is why a cluster balancer matches them itself and calls kvr_place.
local RES_SUFFIX = '{head}:res'

-- The view's prefix in the one key a function takes; nil and what is wrong otherwise.
local function view_prefix(fn, keys)
  if #keys ~= 1 then
    return nil, string.format('ERR %s (layout %d): expected 1 key, the reservations key <prefix>%s, got %d; '
      .. 'a client older than layout %d must be upgraded', fn, LAYOUT, RES_SUFFIX, #keys, LAYOUT)
  end
  local res = keys[1]
  if #res > MAX_ID or #res < #RES_SUFFIX or string.sub(res, -#RES_SUFFIX) ~= RES_SUFFIX then
    return nil, string.format('ERR %s: the key must be the reservations key <prefix>%s, got %s', fn, RES_SUFFIX, shown(res))
  end
  return string.sub(res, 1, #res - #RES_SUFFIX)
end

-- The keys kvr_pick and kvr_peek read and write, from the reservations key and the prompt's hashes:
-- meta, engines, the group of block 1, the group of blocks 2..n, class switches, reservations. A
-- block's group is tagged by the chain's hash at min(position, tag depth) (ViewLayout.tag); hashes
-- that are not 16*n hex digits give placeholder groups, and pick_with refuses the call before it
-- reads them.
local function pick_keys(prefix, res, args)
  local meta = prefix .. '{head}:meta'
  local packed = args[6] or ''
  local function group(position)
    local tag = string.sub(packed, 16 * position - 15, 16 * position)
    return prefix .. 'g:{' .. (#tag == 16 and tag or '0000000000000000') .. '}'
  end
  local depth = tonumber(redis.call('HGET', meta, 'tag_depth')) or 2
  return {meta, prefix .. '{head}:engines', group(1), group(math.min(2, math.max(1, depth))), prefix .. '{head}:classes', res}
end

local function with_pick_keys(fn, reserving)
  return function(keys, args)
    local prefix, wrong = view_prefix(fn, keys)
    if not prefix then return redis.error_reply(wrong) end
    return pick_with(pick_keys(prefix, keys[1], args), args, reserving)
  end
end

redis.register_function{function_name = 'kvr_pick', callback = with_pick_keys('kvr_pick', true)}
redis.register_function{function_name = 'kvr_peek', callback = with_pick_keys('kvr_peek', false), flags = {'no-writes'}}
redis.register_function{function_name = 'kvr_place', callback = function(keys, args)
  local prefix, wrong = view_prefix('kvr_place', keys)
  if not prefix then return redis.error_reply(wrong) end
  return place({prefix .. '{head}:meta', prefix .. '{head}:engines', prefix .. '{head}:classes', keys[1]}, args)
end}
redis.register_function{function_name = 'kvr_done', callback = function(keys, args)
  local prefix, wrong = view_prefix('kvr_done', keys)
  if not prefix then return redis.error_reply(wrong) end
  return done({prefix .. '{head}:engines', keys[1]}, args)
end}
redis.register_function{function_name = 'kvr_holding', callback = function(keys, args)
  local _, wrong = view_prefix('kvr_holding', keys)
  if wrong then return redis.error_reply(wrong) end
  return holding(keys, args)
end}
redis.register_function{function_name = 'kvr_layout', callback = function() return LAYOUT end, flags = {'no-writes'}}
redis.register_function{function_name = 'kvr_revision', callback = function() return REVISION end, flags = {'no-writes'}}
