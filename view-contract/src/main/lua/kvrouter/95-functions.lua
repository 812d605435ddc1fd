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
  -- Anchored, the class runs once a digit: an unanchored '[^0-9a-f]' starts a match at every digit,
  -- ~10 us at 64 blocks and a third of a 2 048-block pick.
  if not string.find(packed, '^[0-9a-f]*$') then
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

-- keys (found from the one key kvr_done takes): engines, reservations, meta; ARGV: request ids. The
-- requests are done (or were never sent): their reservations leave, and a request its engine's last
-- load report counted is one less there until the engine reports again; a request still held leaves
-- the waiting room. Returns how many reservations there were.
local function done(keys, args)
  if #keys ~= 2 and #keys ~= 3 then return redis.error_reply(string.format('ERR kvr_done: expected 3 keys, got %d', #keys)) end
  for i = 1, #args do
    if #args[i] > MAX_ID then return redis.error_reply('ERR kvr_done: a request id is over ' .. MAX_ID .. ' characters: ' .. shown(args[i])) end
  end
  local engines_key, res = keys[1], keys[2]
  local now = now_ms()
  local released = 0
  -- Claimed before anything is written (see kept_counts), for the view's reservation TTL (the
  -- default's without a meta key).
  local ttl = keys[3] and tonumber(redis.call('HGET', keys[3], 'reservation_ttl_ms'))
  kept_counts(res, true, ttl or META_DEFAULT.reservation_ttl_ms)
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
  local seen = res_keys(res).hold_seen
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
local RES_SUFFIX = KEY.reservations

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
  local meta = prefix .. KEY.meta
  local packed = args[6] or ''
  local function group(position)
    local tag = string.sub(packed, 16 * position - 15, 16 * position)
    return prefix .. KEY.group .. (#tag == 16 and tag or '0000000000000000') .. '}'
  end
  local depth = tonumber(redis.call('HGET', meta, 'tag_depth')) or META_DEFAULT.tag_depth
  return {meta, prefix .. KEY.engines, group(1), group(math.min(2, math.max(1, depth))), prefix .. KEY.classes, res}
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
  return place({prefix .. KEY.meta, prefix .. KEY.engines, prefix .. KEY.classes, keys[1]}, args)
end}
redis.register_function{function_name = 'kvr_done', callback = function(keys, args)
  local prefix, wrong = view_prefix('kvr_done', keys)
  if not prefix then return redis.error_reply(wrong) end
  return done({prefix .. KEY.engines, keys[1], prefix .. KEY.meta}, args)
end}
redis.register_function{function_name = 'kvr_holding', callback = function(keys, args)
  local _, wrong = view_prefix('kvr_holding', keys)
  if wrong then return redis.error_reply(wrong) end
  return holding(keys, args)
end}
redis.register_function{function_name = 'kvr_layout', callback = function() return LAYOUT end, flags = {'no-writes'}}
redis.register_function{function_name = 'kvr_revision', callback = function() return REVISION end, flags = {'no-writes'}}

