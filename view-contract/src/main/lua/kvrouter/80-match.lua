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
      local marks = entry_marks(id)
      searches[#searches + 1] = {id = id, e = e, lead = marks[1], mid = marks[2], epoch = e.epoch_number,
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

-- The searched engine's entry in block field `v` when it counts (its stored_ms), else nil.
local function entry_counts(h, s, v)
  local stored36, epoch36 = holder_of(v, s.lead, s.mid)
  if not stored36 or tonumber(epoch36, 36) ~= s.epoch then return nil end
  local stored = tonumber(stored36, 36)
  local x = (h.now - stored) / s.e.tau
  if x >= 0 and x < s.limit - s.band then return stored end
  if x >= 0 and x > s.limit + s.band then return nil end
  return confidence(h, s.e, stored) and stored or nil
end

-- The same for the block at a probed position. A prompt's blocks stored in one engine event carry the
-- same text (the same holders, stored at the same ms), so the last field's answer is kept by its text.
local function held_at(h, s, v)
  if not v then return nil end
  if v ~= s.text then s.text, s.text_stored = v, entry_counts(h, s, v) end
  return s.text_stored
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

