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
  local keys = res_keys(res)
  redis.call('ZREM', keys.hold, request)
  redis.call('ZREM', keys.hold_seen, request)
end

-- True when the request must wait (recorded in the waiting room); false when it is placed now.
local function hold(h, request, hold_ms)
  local key, seen, now = h.keys.hold, h.keys.hold_seen, h.now
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
    if not unavailable(e) then
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

-- An answer with no engine: nothing matched, nothing saved.
local function no_engine(reason, age)
  local result = {}
  result[ANSWER.engine], result[ANSWER.matched_blocks], result[ANSWER.reason], result[ANSWER.view_age_ms] = '', 0, reason, age
  result[ANSWER.confidence], result[ANSWER.outcome], result[ANSWER.saved_tokens] = '0', OUTCOME.COLD, 0
  result[ANSWER.saved_usd], result[ANSWER.saved_prefill_ms], result[ANSWER.decode_engine] = '0', '0', ''
  result[ANSWER.handoff_ms], result[ANSWER.best_match], result[ANSWER.added_wait_ms] = '0', 0, '0'
  return result
end

-- No view (no meta key): the caller routes on its own.
local NO_VIEW = no_engine(REASON.NO_VIEW, -1)

-- The answer to a request told to wait: no engine, reason HOLD; it asks again.
local function hold_answer(h)
  return no_engine(REASON.HOLD, h.age)
end

-- Whether a request offered to wait (hold_ms, '' or 0: never) must: only with a request id to
-- place it under, and on a fresh view (a stale one's loads say nothing of free slots).
local function held(h, request, hold_ms, max_age)
  hold_ms = tonumber(hold_ms) or 0
  if hold_ms <= 0 or request == '' or h.age > max_age then return false end
  return hold(h, request, hold_ms)
end

