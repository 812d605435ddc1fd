-- Appended by scripts/pick-profile.sh to the routing view's function library (its register_function
-- calls cut off), so the library's own local functions run here as one EVAL, with each part of a
-- pick timed by TIME around it: server time only, no client or network. Not a function of the view.
-- ARGV: picks, blocks per prompt, key prefix, 'pick' (reserving) or 'peek', optionally 'untimed'.
local timed = {}
local function clock()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1e6 + tonumber(t[2])
end
local function wrap(name, f)
  return function(...)
    local t0 = clock()
    local a, b, c = f(...)
    timed[name] = (timed[name] or 0) + clock() - t0
    return a, b, c
  end
end
-- The library's locals, reassigned: pick_with reaches them as upvalues, so it calls the timed ones
-- (not when ARGV[5] is 'untimed': scripts/pick-instructions.sh counts the pick alone).
if ARGV[5] ~= 'untimed' then
  read_head = wrap('read_head', read_head)
  decide = wrap('decide', decide)
  match_in_view = wrap('  match_in_view', match_in_view)
  match_pending = wrap('  match_pending', match_pending)
  reserve = wrap('reserve', reserve)
  pend = wrap('  pend', pend)
end

local picks, blocks, prefix, reserving = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], ARGV[4] ~= 'peek'
local meta, engines, group1, group_rest, classes, res =
  prefix .. 'meta', prefix .. 'engines', prefix .. 'g1', prefix .. 'g', prefix .. 'classes', prefix .. 'res'
local now = math.floor(clock() / 1000)
-- The view ./kvr bench pick makes: 16 engines with slots and slot time learned, the prefill rate
-- known; 64 prompts each held whole by one or two engines.
redis.call('HSET', meta, 'updated_ms', now, 'busy_factor', 2, 'confidence_floor', 0.05, 'client_cap', 0.5,
  'client_min_inflight', 8, 'chunk_tokens', 16, 'kv_bytes_per_token', 131072, 'prefill_tokens_per_s', 10000,
  'fabric_bytes_per_s', 10000000000, 'usd_per_million_input', 1, 'uncached_prefill_weight', 3, 'reservation_ttl_ms', 60000)
for e = 0, 15 do
  redis.call('HSET', engines, 'engine-' .. e, 'READY|0|' .. (2 + e % 4) .. '|500|600000|1|0|' .. now .. '|BOTH|8|0|4000')
end
math.randomseed(1)
local prompts = {}
for p = 1, 64 do
  local hashes = {}
  for i = 1, blocks do
    -- 16 hex digits from four draws of 16 bits (Lua's math.random overflows past 2^31 - 1 here).
    hashes[i] = string.format('%04x%04x%04x%04x', math.random(0, 65535), math.random(0, 65535), math.random(0, 65535),
      math.random(0, 65535))
  end
  prompts[p] = table.concat(hashes)
  local a, b = 'engine-' .. math.random(0, 15), 'engine-' .. math.random(0, 15)
  local held = a .. '=' .. to36(now) .. '.1'
  if b ~= a then held = held .. ',' .. b .. '=' .. to36(now) .. '.1' end
  redis.call('HSET', group1, hashes[1], held)
  for i = 2, blocks do redis.call('HSET', group_rest, hashes[i], held) end
end

-- The picks as the bench makes them: 32 clients, every request reported done 64 at a time.
local keys, done_keys, sent, total = {meta, engines, group1, group_rest, classes, res}, {engines, res}, {}, 0
for i = 1, picks do
  local t0 = clock()
  local answer = pick_with(keys, {'3600000', 'profile', 'client-' .. (i % 32), 'request-' .. i, tostring(blocks),
    prompts[i % 64 + 1]}, reserving)
  total = total + clock() - t0
  if answer.err then return answer end
  sent[#sent + 1] = 'request-' .. i
  if #sent == 64 then
    done(done_keys, sent)
    sent = {}
  end
end
local lines = {string.format('%-18s %8.1f', 'whole pick', total / picks)}
for name, usec in pairs(timed) do lines[#lines + 1] = string.format('%-18s %8.1f', name, usec / picks) end
table.sort(lines, function(a, b) return a:gsub('^ +', '') < b:gsub('^ +', '') end)
return lines
