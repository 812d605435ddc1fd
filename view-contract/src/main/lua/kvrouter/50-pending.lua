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

-- A pending value parsed into one flat list of four per entry: its text, its engine, ready_ms and
-- epoch (numbers). Kept by its text (memo): a prompt's fields change only when that prompt is placed,
-- so most picks read texts parsed before; nothing writes to a list.
local pending_list_of = memo(function(v)
  local list, k = {}, 0
  for text, id, ready36, epoch36 in string.gmatch(v, HOLDER) do
    list[k + 1], list[k + 2], list[k + 3], list[k + 4] = text, id, tonumber(ready36, 36), tonumber(epoch36, 36)
    k = k + 4
  end
  return list
end)
local NO_ENTRIES = {}

-- Pending values (an HMGET's reply) parsed, a list each; once a pick, for the match and the
-- placement's record.
local function pending_entries(values)
  local lists = {}
  for i = 1, #values do
    lists[i] = values[i] and pending_list_of(values[i]) or NO_ENTRIES
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

-- Keeps the pending prefixes bounded: expired block hashes swept (at most SWEEP a call: sweep, with
-- the kept counts `k`), then past PENDING_CAP the soonest to expire; both keys live until the latest
-- holder expires (`ttl`): a TTL is set when there is none (NX) and otherwise only ever extended (GT),
-- so a placement ready sooner does not cut a later one short.
local function forget_pending(keys, old)
  redis.call('HDEL', keys.pending, old)
  redis.call('ZREM', keys.pending_by_time, old)
end
local function trim_pending(k, keys, now, ttl)
  local key, by_time = keys.pending, keys.pending_by_time
  sweep(k, by_time, now, forget_pending, keys)
  local over = redis.call('ZCARD', by_time) - PENDING_CAP
  if over > 0 then
    for _, old in ipairs(redis.call('ZRANGE', by_time, 0, over - 1)) do forget_pending(keys, old) end
  end
  ttl = number_text(ttl)
  redis.call('PEXPIRE', key, ttl, 'NX')
  redis.call('PEXPIRE', key, ttl, 'GT')
  redis.call('PEXPIRE', by_time, ttl, 'NX')
  redis.call('PEXPIRE', by_time, ttl, 'GT')
end

-- Records that `engine` will hold the prompt's sampled prefixes from `ready` on (h.sampled: the
-- prompt's hashes at the sampled positions h.at). A holder leaves PENDING_MS after it is ready, a
-- block hash keeps PENDING_HOLDERS, the hash PENDING_CAP block hashes. The first `held` blocks the
-- engine holds already (the run the placement matched there): they are ready now, only the blocks
-- the placement brings wait for its prefill. (Marking the whole prompt as still being computed hid
-- a burst's holder from the next requests, which went cold elsewhere: run 10.)
local function pend(h, engine, ready, held)
  local key, now = h.keys.pending, h.now
  local epoch = h.engines[engine].epoch_number
  local epoch36 = to36(epoch)
  -- Each position's ready_ms is mostly one of two times (now, or when the prefill is done): its entry
  -- and its score made into text once each (to36 is ~2 µs, a tenth of the record's cost when done
  -- per position; see number_text for the scores).
  local own_text, score_text = {}, {}
  -- The pick read and parsed these fields already when it matched them (nothing writes between).
  local lists = h.pending_entries or pending_entries(redis.call('HMGET', key, unpack(h.sampled)))
  -- Every field in one HSET and one ZADD (the same end state as a write per field, a tenth of the calls).
  local values, scores, least = {}, {}, math.huge
  for i, field in ipairs(h.sampled) do
    local mine = ready_with_copy(lists[i], engine, epoch, h.at[i] <= held and now or ready, now)
    own_text[mine] = own_text[mine] or engine .. '=' .. to36(mine) .. '.' .. epoch36
    local text, last = pending_field(lists[i], engine, own_text[mine], mine, now)
    local score = last + PENDING_MS
    score_text[score] = score_text[score] or number_text(score)
    values[#values + 1] = field
    values[#values + 1] = text
    scores[#scores + 1] = score_text[score]
    scores[#scores + 1] = field
    if score < least then least = score end
  end
  local by_time = h.keys.pending_by_time
  redis.call('HSET', key, unpack(values))
  redis.call('ZADD', by_time, unpack(scores))
  scored_at(h.kept, by_time, least)
  trim_pending(h.kept, h.keys, now, ready - now + PENDING_MS)
end

-- The runs pending placements bring (see PENDING_MS), merged into the view's match: an engine's run
-- is the longer of the two; a pending run is taken as certain (confidence 1). h.sampled holds the
-- prompt's hashes at the sampled positions `at`. Engines a placed copy is still being computed on
-- go in h.warming (engine -> run).
local function match_pending(h, at, depth, conf)
  h.warming = {}
  if not h.sampled or #h.sampled == 0 then return depth, conf end
  local lists = pending_entries(redis.call('HMGET', h.keys.pending, unpack(h.sampled)))
  h.pending_entries = lists
  local engines, warming, now = h.engines, h.warming, h.now
  for i = #lists, 1, -1 do
    local list, p = lists[i], at[i]
    for j = 1, #list, 4 do
      local id, ready = list[j + 1], list[j + 2]
      local e = engines[id]
      if e and list[j + 3] == e.epoch_number and p > (depth[id] or 0) then
        if ready <= now and now < ready + PENDING_MS then
          depth[id] = p
          conf[id] = 1
        elseif ready > now and p > (warming[id] or 0) then
          -- Still computing blocks it does not hold: a copy on its way there.
          warming[id] = p
        end
      end
    end
  end
  return depth, conf
end

