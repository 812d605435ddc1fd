-- Appended by scripts/pick-diff.sh after two versions of the routing view's function library, each
-- wrapped as library_a() and library_b() with a clock the test sets. Makes random views, reservation
-- histories and calls (kvr_pick reserving or not, kvr_place, kvr_done), runs each call on both
-- versions from the same state, and compares their answers and every key they leave. Returns the
-- number of calls compared, or the first difference. Not a function of the view: a check that a
-- change to the library keeps its answers.
-- ARGV: cases, seed, key prefix (every key of the run is under it; deleted between cases).
-- B2: a second instance of B, as another Lua state writing the same keys would be (a restart, a
-- failover and back), which what B keeps between calls must notice.
local A, B, B2 = library_a(), library_b(), library_b()
-- Block and pending values written as the library writes them (its own base 36).
local to36_for_test = A.to36
local cases, seed, prefix = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
math.randomseed(seed)
local function one_of(list) return list[math.random(#list)] end
local function chance(p) return math.random() < p end

local meta, engines_key, group1, group_rest, classes, res =
  prefix .. 'meta', prefix .. 'engines', prefix .. 'g1', prefix .. 'g', prefix .. 'classes', prefix .. 'res'
local function clear()
  local keys = redis.call('KEYS', prefix .. '*')
  for i = 1, #keys, 500 do redis.call('DEL', unpack(keys, i, math.min(i + 499, #keys))) end
end
-- Every key under the prefix as text: its type, content in a fixed order, and its TTL to 0.1 s.
local function state()
  local keys = redis.call('KEYS', prefix .. '*')
  table.sort(keys)
  local lines = {}
  for _, k in ipairs(keys) do
    -- Not compared: which library's Lua state keeps counts (kvrouter.lua, kept_counts) is no answer.
    if string.sub(k, -8) ~= ':kept-by' then
      local t = redis.call('TYPE', k).ok
      local content
      if t == 'hash' then
        local flat, pairs_ = redis.call('HGETALL', k), {}
        for i = 1, #flat, 2 do pairs_[#pairs_ + 1] = flat[i] .. '=' .. flat[i + 1] end
        table.sort(pairs_)
        content = table.concat(pairs_, ' ')
      elseif t == 'zset' then
        content = table.concat(redis.call('ZRANGE', k, 0, -1, 'WITHSCORES'), ' ')
      else
        content = tostring(redis.call('GET', k))
      end
      local ttl = redis.call('PTTL', k)
      lines[#lines + 1] = {key = k, text = t .. ' ' .. content, ttl = ttl}
    end
  end
  return lines
end
local function dump()
  local saved = {}
  for _, k in ipairs(redis.call('KEYS', prefix .. '*')) do
    saved[#saved + 1] = {k, redis.call('DUMP', k), math.max(0, redis.call('PTTL', k))}
  end
  return saved
end
local function restore(saved)
  clear()
  for _, s in ipairs(saved) do redis.call('RESTORE', s[1], s[3], s[2]) end
end
local function answer_text(r)
  if type(r) ~= 'table' then return tostring(r) end
  if r.err then return 'error: ' .. r.err end
  local parts = {}
  for i, v in ipairs(r) do parts[i] = FAMILY[tostring(v)] or tostring(v) end
  return table.concat(parts, ' | ')
end
local function hex16() return string.format('%04x%04x%04x%04x', math.random(0, 65535), math.random(0, 65535),
  math.random(0, 65535), math.random(0, 65535)) end

local compared = 0
-- COUNT (set by pick-diff.sh): count the calls that differ, by what changed, instead of stopping at the first.
local changed, differing = {}, 0
for case = 1, cases do
  clear()
  local now = 1764770000000 + math.random(0, 1000000)
  CLOCK.now = now
  -- The view: meta, engines, holders of a few prompts.
  local prefill = chance(0.7) and one_of({5000, 10000, 40000}) or nil
  local m = {'updated_ms', now - math.random(0, 3000), 'busy_factor', one_of({1.5, 2}), 'confidence_floor', 0.05,
    'client_cap', one_of({0.25, 0.5, 1}), 'client_min_inflight', one_of({1, 2, 4, 1000}), 'chunk_tokens', 16,
    'usd_per_million_input', 1, 'uncached_prefill_weight', one_of({1, 3}), 'reservation_ttl_ms', one_of({2000, 60000})}
  if prefill then
    for _, v in ipairs({'prefill_tokens_per_s', prefill, 'kv_bytes_per_token', 131072, 'fabric_bytes_per_s', one_of({1e9, 1e11})}) do
      m[#m + 1] = v
    end
  end
  redis.call('HSET', meta, unpack(m))
  local ids = {}
  -- An engine's load report (again during the history: a new text, now and then a new cache epoch).
  local function report(id, at)
    local status = one_of({'READY', 'READY', 'READY', 'READY', 'BUSY', 'DRAINING', 'SUSPECT', 'DEAD', 'RESTARTED'})
    redis.call('HSET', engines_key, id, table.concat({status, math.random(0, 3), math.random(0, 5), 500, one_of({600000, 2000}),
      one_of({1, 1, 2}), one_of({0, 0, 1}), at, chance(0.15) and 'DECODE' or 'BOTH',
      one_of({0, 2, 4, 8}), one_of({0, 0, 4000, 20000}), one_of({0, 0, 800, 4000})}, '|'))
  end
  for e = 1, math.random(1, 10) do
    ids[#ids + 1] = 'e' .. e
    report('e' .. e, now - math.random(0, 4000))
  end
  if chance(0.3) then redis.call('HSET', classes, 'c1', 'off') end
  local prompts = {}
  for p = 1, one_of({1, 2, 4}) do
    local n = one_of({0, 1, 2, 3, 5, 8, 17, 64})
    local hashes = {}
    for i = 1, n do hashes[i] = hex16() end
    prompts[p] = hashes
    for _, id in ipairs(ids) do
      if n > 0 and chance(0.4) then
        local run = math.random(1, n)
        for i = 1, run do
          if not chance(0.05) then -- now and then a hole
            local key = i == 1 and group1 or group_rest
            local old = redis.call('HGET', key, hashes[i])
            local entry = id .. '=' .. to36_for_test(now - math.random(0, 5000)) .. '.' .. to36_for_test(one_of({1, 1, 2}))
            redis.call('HSET', key, hashes[i], old and (old .. ',' .. entry) or entry)
          end
        end
      end
    end
  end
  -- Pending prefixes left by earlier placements (as kvr_pick writes them: latest ready first, up to
  -- 10 engines, some expired, some of another epoch), and now and then dozens expired at once.
  if chance(0.5) then
    local pending = res .. ':pending'
    for _, hashes in ipairs(prompts) do
      local p = 1
      while p <= #hashes do
        if chance(0.6) then
          local entries, ready = {}, now + math.random(-6000, 3000)
          local last = ready
          for k = 1, math.random(1, math.min(10, #ids)) do
            entries[k] = ids[k] .. '=' .. to36_for_test(ready) .. '.' .. to36_for_test(one_of({1, 1, 2}))
            ready = ready - math.random(0, 2000)
          end
          redis.call('HSET', pending, hashes[p], table.concat(entries, ','))
          redis.call('ZADD', pending .. ':by-time', last + 5000, hashes[p])
        end
        p = p < #hashes and math.min(p * 2, #hashes) or p + 1
      end
    end
    if chance(0.3) then
      for k = 1, math.random(10, 40) do
        redis.call('HSET', pending, 'gone' .. k, 'e1=' .. to36_for_test(now - 10000) .. '.1')
        redis.call('ZADD', pending .. ':by-time', now - 5000 - k, 'gone' .. k)
      end
    end
  end
  -- A call's arguments: one of the prompts, a client, a request id.
  local request_ids = {}
  local function call_args(for_place)
    local hashes = one_of(prompts)
    local n = #hashes
    local request = chance(0.9) and ('r' .. math.random(1, 40)) or ''
    local avoid = chance(0.15) and one_of(ids) or ''
    local hold = chance(0.2) and tostring(one_of({100, 5000})) or ''
    local client = chance(0.8) and ('client-' .. math.random(1, 3)) or ''
    local class = chance(0.3) and 'c1' or ''
    local max_age = tostring(one_of({10000, 2000}))
    if not for_place then
      return {max_age, class, client, request, tostring(n), table.concat(hashes), avoid, hold}, request
    end
    local runs = {}
    for _, id in ipairs(ids) do
      if n > 0 and chance(0.4) then runs[#runs + 1] = id .. '=' .. math.random(1, n) .. ':' .. one_of({'1', '0.5', '0.07'}) end
    end
    local args = {max_age, class, client, request, tostring(n), table.concat(runs, ',')}
    local at, p = {}, 1
    while p < n do at[#at + 1] = p; p = p * 2 end
    if n > 0 then at[#at + 1] = n end
    -- The sampled hashes, all or none; the engines to avoid and hold_ms only after them (kvr_place's arguments).
    if chance(0.8) then
      for _, q in ipairs(at) do args[#args + 1] = hashes[q] end
      args[#args + 1] = avoid
      args[#args + 1] = hold
    end
    return args, request
  end
  local function head_keys() return {meta, engines_key, group1, group_rest, classes, res} end
  local function place_keys() return {meta, engines_key, classes, res} end
  -- A history made with B (the working copy, so what it keeps between calls is what the compared
  -- call then uses), now and then with B2 (or a peek of B's, which must not use what B2 changed):
  -- placements and dones, the clock moving.
  -- Long ones now and then (a pending block's holders at their cap, sweeps past their bound) and
  -- now and then a jump of seconds (reservations and pending prefixes expiring).
  for _ = 1, chance(0.3) and math.random(20, 60) or math.random(0, 12) do
    CLOCK.now = CLOCK.now + (chance(0.05) and math.random(2000, 7000) or math.random(0, 400))
    if chance(0.1) then
      report(one_of(ids), CLOCK.now - math.random(0, 300))
    elseif chance(0.75) then
      local args, request = call_args(false)
      local lib = chance(0.15) and B2 or B
      lib.pick(head_keys(), args, not chance(0.1))
      if request ~= '' then request_ids[#request_ids + 1] = request end
    elseif #request_ids > 0 then
      (chance(0.15) and B2 or B).done({engines_key, res}, {one_of(request_ids)})
    end
  end
  -- The call compared: the same state, the same clock, each version in turn.
  CLOCK.now = CLOCK.now + math.random(0, 400)
  local kind = one_of({'pick', 'pick', 'peek', 'place', 'done'})
  local args
  if kind == 'place' then args = call_args(true)
  elseif kind == 'done' then args = {'r' .. math.random(1, 40), 'r' .. math.random(1, 40)}
  else args = call_args(false) end
  local function run(lib)
    if kind == 'pick' then return lib.pick(head_keys(), args, true) end
    if kind == 'peek' then return lib.pick(head_keys(), args, false) end
    if kind == 'place' then return lib.place(place_keys(), args) end
    return lib.done({engines_key, res}, args)
  end
  local before = dump()
  local run_answer_a = run(A)
  local answer_a, state_a = answer_text(run_answer_a), state()
  restore(before)
  local run_answer_b = run(B)
  local answer_b, state_b = answer_text(run_answer_b), state()
  local where = nil
  if answer_a ~= answer_b then where = 'answer: ' .. answer_a .. '  vs  ' .. answer_b end
  for i = 1, math.max(#state_a, #state_b) do
    if where then break end
    local x, y = state_a[i], state_b[i]
    if not x or not y or x.key ~= y.key or x.text ~= y.text or (x.ttl > 0) ~= (y.ttl > 0) or math.abs(x.ttl - y.ttl) > 100 then
      where = 'key ' .. (x and x.key or '-') .. ': ' .. (x and x.text or '-') .. ' ttl ' .. (x and x.ttl or '-') .. '  vs  '
        .. (y and y.key or '-') .. ': ' .. (y and y.text or '-') .. ' ttl ' .. (y and y.ttl or '-')
    end
  end
  if where and not COUNT then
    clear()
    return {'case ' .. case .. ' (seed ' .. seed .. '), ' .. kind .. ' ' .. table.concat(args, ' '), where}
  end
  if where then
    -- Counted by what changed: the engine and reason answered (A's -> B's), or the keys alone.
    local a, b = run_answer_a, run_answer_b
    local change = answer_a ~= answer_b and (kind .. ' ' .. a[3] .. ' -> ' .. b[3] .. (a[1] == b[1] and ', same engine' or ''))
      or (kind .. ' keys only')
    changed[change] = (changed[change] or 0) + 1
    differing = differing + 1
  end
  compared = compared + 1
end
clear()
if COUNT then
  local lines = {compared .. ' calls compared, ' .. compared - differing .. ' the same; the others by what changed:'}
  for change, n in pairs(changed) do lines[#lines + 1] = string.format('%6d  %s', n, change) end
  table.sort(lines, function(x, y) return x > y end)
  return lines
end
return {compared .. ' calls compared, the same answers and keys'}
