#!lua name=kvrouter

-- kv-router's routing view functions. Loaded (FUNCTION LOAD REPLACE) by the view sink when it
-- starts; the layout is documented in redis-sink/README.md. Keep in step with ViewLayout.java.
local LAYOUT = 6

-- Engine table value: status|waiting|running|kv_permille|tau_ms|epoch|unsynced|load_ms|role
local function parse_engine(v)
  local f = {}
  for part in string.gmatch(v, '([^|]*)|?') do
    f[#f + 1] = part
    if #f == 9 then break end
  end
  return {
    status = f[1], waiting = tonumber(f[2]) or 0, running = tonumber(f[3]) or 0,
    kv = tonumber(f[4]) or 0, tau = tonumber(f[5]) or 1, epoch = f[6],
    unsynced = f[7] == '1', load_ms = tonumber(f[8]) or 0,
    decode_only = f[9] == 'DECODE',
  }
end

-- Block field value: engine=stored_ms(base 36).epoch(base 36),engine=...
local function holders(v)
  local h = {}
  if v then
    for engine, stored, epoch in string.gmatch(v, '([^,=]+)=(%w+)%.(%w+)') do
      h[engine] = {stored = tonumber(stored, 36), epoch = tostring(tonumber(epoch, 36))}
    end
  end
  return h
end

-- One engine's entry in a block field, without parsing the others: {stored, epoch} or nil.
local function holder_of(v, id)
  if not v then return nil end
  local at
  if string.sub(v, 1, #id + 1) == id .. '=' then
    at = #id + 2
  else
    local s = string.find(v, ',' .. id .. '=', 1, true)
    if not s then return nil end
    at = s + #id + 2
  end
  local stored, epoch = string.match(v, '^(%w+)%.(%w+)', at)
  if not stored then return nil end
  return {stored = tonumber(stored, 36), epoch = tostring(tonumber(epoch, 36))}
end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- KEYS: meta, engines, group of block 1, group of blocks 2..n, class policy, clients in flight
-- ARGV: max_view_age_ms, prefix class ('' for none), client id ('' for none), n, hash_1 ... hash_n
--       (16 hex digits each), and optionally the balancer's own recent picks, oldest first,
--       engine@epoch_ms[:uncached_prompt_tokens],... (an older caller leaves it out)
-- Returns: engine, matched blocks, reason, view age ms (-1 without a view), confidence (string),
--          expected outcome (HIT, TRANSFER, COLD), prompt tokens it saves recomputing, their price
--          in dollars (string), prefill milliseconds saved (string), decode engine ('' unless the
--          fleet has a DECODE pool), prefill-to-decode hand-off milliseconds on the TTFT path (string)
local function pick(keys, args)
  local max_age = tonumber(args[1])
  local class = args[2]
  local client = args[3]
  local n = tonumber(args[4])
  local first_hash = 5
  local now = now_ms()
  local meta = redis.call('HMGET', keys[1], 'updated_ms', 'busy_factor', 'confidence_floor', 'client_cap', 'client_min_inflight',
    'chunk_tokens', 'kv_bytes_per_token', 'prefill_tokens_per_s', 'fabric_bytes_per_s', 'usd_per_million_input',
    'uncached_prefill_weight')
  if not meta[1] then
    return {'', 0, 'NO_VIEW', -1, '0', 'COLD', 0, '0', '0', '', '0'}
  end
  local age = now - tonumber(meta[1])
  local busy_factor = tonumber(meta[2]) or 2
  local floor = tonumber(meta[3]) or 0.05
  local horizon = -math.log(floor)
  local client_cap = tonumber(meta[4]) or 1
  local client_min = tonumber(meta[5]) or 1000000000
  local chunk = tonumber(meta[6]) or 16
  local kv_bytes = tonumber(meta[7])
  local prefill_rate = tonumber(meta[8])
  local fabric = tonumber(meta[9])
  local price = tonumber(meta[10]) or 0
  local miss_weight = tonumber(meta[11]) or 3

  local with_decode -- the decode pool's part, defined once the engine table is read
  -- The cost view: what the placement is expected to save. A hit skips the matched prefill; when the
  -- request lands away from the best holder, moving that holder's KV pays if it is faster than
  -- recomputing it (a transfer); else it is a cold start.
  local function priced(result, best_depth)
    local outcome, tokens, saved_ms = 'COLD', 0, 0
    if result[2] > 0 then
      outcome, tokens = 'HIT', result[2] * chunk
      if prefill_rate then saved_ms = tokens / prefill_rate * 1000 end
    elseif best_depth > 0 and kv_bytes and prefill_rate and fabric then
      local t = best_depth * chunk
      local transfer_ms = t * kv_bytes / fabric * 1000
      local prefill_ms = t / prefill_rate * 1000
      if transfer_ms < prefill_ms then
        outcome, tokens, saved_ms = 'TRANSFER', t, prefill_ms - transfer_ms
      end
    end
    result[6] = outcome
    result[7] = tokens
    result[8] = string.format('%.6f', tokens * price / 1000000)
    result[9] = string.format('%.1f', saved_ms)
    return with_decode(result)
  end

  -- The client's requests in flight per engine (kept by the job from decisions and outcomes).
  local inflight, client_total = {}, 0
  if client ~= '' then
    local v = redis.call('HGET', keys[6], client)
    if v then
      for engine, count in string.gmatch(v, '([^,=]+)=(%d+)') do
        inflight[engine] = tonumber(count)
        client_total = client_total + tonumber(count)
      end
    end
  end
  -- One client's burst must not become one engine's point load: past the minimum, no engine may
  -- take more than client_cap of the client's requests in flight (this one included).
  local function over_client_cap(id)
    if client == '' or client_total + 1 < client_min then return false end
    return ((inflight[id] or 0) + 1) / (client_total + 1) > client_cap
  end

  -- Prompts go to BOTH and PREFILL engines; a DECODE pool (disaggregated serving) only takes the
  -- hand-off, so it is kept apart, with its own mean.
  local engines, live, total_load = {}, 0, 0
  local decoders, decode_live, decode_load = {}, 0, 0
  local flat = redis.call('HGETALL', keys[2])
  for i = 1, #flat, 2 do
    local e = parse_engine(flat[i + 1])
    if e.status ~= 'DEAD' and e.status ~= 'RESTARTED' then
      e.load = e.waiting + e.running
      if e.decode_only then
        decoders[flat[i]] = e
        decode_live = decode_live + 1
        decode_load = decode_load + e.load
      else
        engines[flat[i]] = e
        live = live + 1
        total_load = total_load + e.load
      end
    end
  end
  -- The balancer's own picks that the engine table cannot show yet (made after the engine measured
  -- the load it last reported) each add one request to that engine: between two load reports,
  -- placements would otherwise all land on the same least-loaded engine. With their uncached
  -- tokens and the prefill rate they also say how many ms of prefill each engine still has queued
  -- from this balancer (each pick adds its tokens, the queue drains in real time).
  local recent = args[first_hash + n]
  local backlog, backlog_at, has_backlog = {}, {}, false
  if recent and recent ~= '' then
    for id, at, tokens in string.gmatch(recent, '([^,@]+)@(%d+):?(%d*)') do
      at = tonumber(at)
      local e = engines[id]
      if e and at > e.load_ms then
        e.load = e.load + 1
        total_load = total_load + 1
      end
      if tokens ~= '' and prefill_rate then
        local queued = math.max(0, (backlog[id] or 0) - (at - (backlog_at[id] or at)))
        backlog[id] = queued + tonumber(tokens) / prefill_rate * 1000
        backlog_at[id] = at
        has_backlog = true
      end
    end
    for id, at in pairs(backlog_at) do
      backlog[id] = math.max(0, backlog[id] - (now - at))
    end
  end
  local mean = live > 0 and total_load / live or 0
  local decode_mean = decode_live > 0 and decode_load / decode_live or 0

  -- Disaggregated serving: the least loaded decode engine that is ready and not hot (else the least
  -- loaded), and the whole prompt's KV hand-off to it, on the TTFT path whatever the cache saved.
  with_decode = function(result)
    local best, best_load, fallback, fallback_load = '', math.huge, '', math.huge
    for id, e in pairs(decoders) do
      if e.load < fallback_load or (e.load == fallback_load and id < fallback) then fallback, fallback_load = id, e.load end
      local fit = e.status == 'READY' and not (decode_mean > 0 and e.load > busy_factor * decode_mean)
      if fit and (e.load < best_load or (e.load == best_load and id < best)) then best, best_load = id, e.load end
    end
    if best == '' then best = fallback end
    local handoff_ms = 0
    if best ~= '' and kv_bytes and fabric then handoff_ms = n * chunk * kv_bytes / fabric * 1000 end
    result[10] = best
    result[11] = string.format('%.1f', handoff_ms)
    return result
  end

  local function overloaded(id)
    local e = engines[id]
    -- A suspect engine (silent for a while) keeps its entries but gets no new affinity either.
    if e.status == 'BUSY' or e.status == 'DRAINING' or e.status == 'SUSPECT' then return 'SPILL_BUSY' end
    if mean > 0 and e.load > busy_factor * mean then return 'SPILL_HOT' end
    return nil
  end

  local function least_loaded()
    local best, best_load = '', math.huge
    for id, e in pairs(engines) do
      if not overloaded(id) and not over_client_cap(id) and (e.load < best_load or (e.load == best_load and id < best)) then
        best, best_load = id, e.load
      end
    end
    if best == '' then
      for id, e in pairs(engines) do
        if not overloaded(id) and (e.load < best_load or (e.load == best_load and id < best)) then
          best, best_load = id, e.load
        end
      end
    end
    if best == '' then
      for id, e in pairs(engines) do
        if e.load < best_load or (e.load == best_load and id < best) then best, best_load = id, e.load end
      end
    end
    return best
  end

  if age > max_age or n == 0 then
    return priced({least_loaded(), 0, age > max_age and 'FALLBACK_LOAD_ONLY' or 'COLD', age, '0'}, 0)
  end
  -- A class whose affinity does not pay (the job turned it off) is placed on load alone.
  if class ~= '' and redis.call('HGET', keys[5], class) == 'off' then
    return priced({least_loaded(), 0, 'NO_AFFINITY_CLASS', age, '0'}, 0)
  end

  -- The longest consecutive run of blocks each engine holds, from the first block on.
  local function valid(id, entry)
    local e = engines[id]
    if not e or entry.epoch ~= e.epoch then return nil end
    local c = math.exp(-(now - entry.stored) / e.tau)
    if e.unsynced then c = c * 0.5 end
    if c < floor or (now - entry.stored) / e.tau > horizon then return nil end
    return c
  end

  local depth, conf = {}, {}
  for id, entry in pairs(holders(redis.call('HGET', keys[3], args[first_hash]))) do
    local c = valid(id, entry)
    if c then depth[id] = 1; conf[id] = c end
  end
  if n > 1 and next(depth) ~= nil then
    local rest = redis.call('HMGET', keys[4], unpack(args, first_hash + 1, first_hash + n - 1))
    -- Past the first block only the engines still in the run matter: look each up in the field
    -- instead of parsing every holder (a long prompt has hundreds of blocks).
    for i = 2, n do
      local v = rest[i - 1]
      local advanced = false
      if v then
        for id, d in pairs(depth) do
          if d == i - 1 then
            local entry = holder_of(v, id)
            local c = entry and valid(id, entry)
            if c then depth[id] = i; conf[id] = c; advanced = true end
          end
        end
      end
      if not advanced then break end
    end
  end

  -- Best holders: those matching within 10 % of the longest run are replicas of the same prefix
  -- (confidence already left out the entries below the floor), and among them the least loaded
  -- goes first, so a hot prefix spreads over its replicas by load; ties go to the more confident.
  -- The rest follow by blocks times confidence, for REPLICA.
  local ranked = {}
  local best_run = 0
  for id, d in pairs(depth) do
    ranked[#ranked + 1] = id
    if d > best_run then best_run = d end
  end
  if #ranked == 0 then
    return priced({least_loaded(), 0, 'COLD', age, '0'}, 0)
  end
  local function near_best(id) return depth[id] * 10 >= best_run * 9 end
  table.sort(ranked, function(a, b)
    local na, nb = near_best(a), near_best(b)
    if na ~= nb then return na end
    if na and engines[a].load ~= engines[b].load then return engines[a].load < engines[b].load end
    local sa, sb = depth[a] * conf[a], depth[b] * conf[b]
    if sa ~= sb then return sa > sb end
    return a < b
  end)
  local first = ranked[1]
  local best_depth = 0
  for _, id in ipairs(ranked) do
    if depth[id] > best_depth then best_depth = depth[id] end
  end
  local why = overloaded(first) or (over_client_cap(first) and 'SPILL_CLIENT_CAP') or nil
  if not why and has_backlog then
    -- The least delay: the prefill this balancer still has queued on an engine, plus the prefill
    -- of the prompt's blocks that engine lacks weighted by uncached_prefill_weight (3: for this
    -- request's first token, for the requests queued behind its prefill there, and for the cache
    -- room a second copy of another engine's blocks takes). Ties: the longer run, the lower load,
    -- the id. Another engine wins only with strictly less delay than the best holder.
    local function delay(id) return (backlog[id] or 0) + miss_weight * (n - (depth[id] or 0)) * chunk / prefill_rate * 1000 end
    local function sooner(a, b)
      local ta, tb = delay(a), delay(b)
      if ta ~= tb then return ta < tb end
      local da, db = depth[a] or 0, depth[b] or 0
      if da ~= db then return da > db end
      if engines[a].load ~= engines[b].load then return engines[a].load < engines[b].load end
      return a < b
    end
    local best
    for id in pairs(engines) do
      if not overloaded(id) and not over_client_cap(id) and (not best or sooner(id, best)) then best = id end
    end
    if best and delay(best) < delay(first) then
      local d = depth[best] or 0
      if d > 0 then
        return priced({best, d, 'REPLICA', age, string.format('%.4f', conf[best])}, best_depth)
      end
      return priced({best, 0, 'SPILL_BUSY', age, '0'}, best_depth)
    end
  end
  if not why then
    return priced({first, depth[first], 'AFFINITY', age, string.format('%.4f', conf[first])}, best_depth)
  end
  for i = 2, #ranked do
    local id = ranked[i]
    if not overloaded(id) and not over_client_cap(id) then
      return priced({id, depth[id], 'REPLICA', age, string.format('%.4f', conf[id])}, best_depth)
    end
  end
  return priced({least_loaded(), 0, why, age, '0'}, best_depth)
end

redis.register_function{function_name = 'kvr_pick', callback = pick, flags = {'no-writes'}}
redis.register_function{function_name = 'kvr_layout', callback = function() return LAYOUT end, flags = {'no-writes'}}
