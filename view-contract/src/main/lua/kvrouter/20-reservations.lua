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
-- Reservations one engine keeps at most (the oldest leave first).
local RESERVATION_CAP = 1024
-- Expired reservations a placement sweeps at most (bounded work per pick; every pick sweeps).
local SWEEP = 16
-- How long a done request is remembered against its engine's load: far longer than a load report
-- interval, after which a report has long covered it.
local DONE_KEEP_MS = 60000

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
local RESERVED, DONE = RES_KEY.engine, RES_KEY.done
-- The keys under one reservations key <res>, named once per <res> (memo), not a dozen times a pick.
local res_keys = memo(function(res)
  return {kept_by = res .. RES_KEY.kept_by, by_time = res .. RES_KEY.by_time, prefill = res .. RES_KEY.prefill,
    client = res .. RES_KEY.client, reserved = res .. RESERVED, pending = res .. RES_KEY.pending,
    pending_by_time = res .. RES_KEY.pending_by_time, hold = res .. RES_KEY.hold, hold_seen = res .. RES_KEY.hold_seen}
end)
-- This Lua state's id: TIME's seconds and microseconds at its first writing call, and the address of
-- its kept counts (which tells apart two library instances in one Lua state: the test's).
local state_id
-- <res> -> {size = keys kept, [RESERVED] = engine -> kept, [DONE] = engine -> kept, oldest = by-time key ->
-- a lower bound on its scores (see sweep)}, where each kept is {count, bound (nil: count again),
-- expires (the key's, as last set here; nil: unknown)}.
local kept, kept_size = {}, 0

-- The kept counts of `res` for this call (nil: none may be kept or used), after the check above.
-- `writing`: the call may write, and claims <res>:kept-by when it is not this state's.
local function kept_counts(res, writing, ttl)
  local owner = redis.call('GET', res_keys(res).kept_by)
  if state_id and owner == state_id then
    if kept[res] then return kept[res] end
  elseif not writing then
    return nil
  else
    if not state_id then
      local t = redis.call('TIME')
      state_id = t[1] .. '.' .. t[2] .. '.' .. string.match(tostring(kept), '%x+$')
    end
    redis.call('SET', res_keys(res).kept_by, state_id, 'PX', math.max(1, math.floor(ttl)))
  end
  if not kept[res] then
    if kept_size >= KEPT_CAP then kept, kept_size = {}, 0 end
    kept_size = kept_size + 1
  end
  kept[res] = {size = 0, [RESERVED] = {}, [DONE] = {}, oldest = {}}
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
  if entry and entry.bound == bound then
    local count = entry.count
    if count == 0 or now < (entry.expires or 0) - EXPIRY_MARGIN_MS then return count end
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

-- The sweeps. A by-time key (reservations by when they were made, pending prefixes by when they
-- expire) is swept on every placement: at most SWEEP members scored below `before` leave, oldest
-- first (`drop(context, member)` removes one everywhere). The kept counts `k` (see kept_counts:
-- only this Lua state writes the keys while they are kept) also keep a lower bound on each by-time
-- key's scores: the least score a sweep left there, lowered by every score written since
-- (scored_at); removals only raise the true least. While that bound is at or past `before` nothing
-- is due and the sweep reads nothing, so it costs a command only when something may be.
local function sweep(k, key, before, drop, context)
  local oldest = k and k.oldest[key]
  if oldest and oldest >= before then return end
  -- One read past SWEEP: the first member left tells the bound.
  local got = redis.call('ZRANGE', key, 0, SWEEP, 'WITHSCORES')
  local bound = math.huge
  for i = 1, #got, 2 do
    local score = tonumber(got[i + 1])
    if score >= before then bound = score; break end
    if i > 2 * SWEEP then bound = nil; break end
    drop(context, got[i])
  end
  if k then k.oldest[key] = bound end
end

-- A score written to a by-time key: the kept bound (if any) lowered to it.
local function scored_at(k, key, score)
  local oldest = k and k.oldest[key]
  if oldest and score < oldest then k.oldest[key] = score end
end

-- Removes one reservation everywhere it is counted; 1 when there was one.
local function release(res, request)
  local v = redis.call('HGET', res, request)
  if not v then return 0 end
  local engine, client = string.match(v, '^([^|]*)|[^|]*|[^|]*|(.*)$')
  redis.call('HDEL', res, request)
  local keys = res_keys(res)
  redis.call('ZREM', keys.by_time, request)
  redis.call('ZREM', keys.reserved .. engine, request)
  written(res, RESERVED, engine)
  if client and client ~= '' then
    local key = keys.client .. client
    if redis.call('HINCRBY', key, engine, '-1') <= 0 then redis.call('HDEL', key, engine) end
  end
  return 1
end

