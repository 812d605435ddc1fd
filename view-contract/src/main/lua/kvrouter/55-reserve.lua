-- Records the placement as a reservation (request id '' records nothing) and keeps the
-- reservations bounded: expired ones leave (at most SWEEP a call), each engine keeps RESERVATION_CAP.
local function reserve(h, result, request, n)
  local engine = result[ANSWER.engine]
  if request == '' or engine == '' then return end
  local res, keys, now, ttl = h.res, h.keys, h.now, h.res_ttl
  local now_text, ttl_text = number_text(now), number_text(ttl)
  -- The prefill it queues there: the prompt less what the placement expects to find cached (answer
  -- saved_tokens of a HIT: a run the queue ahead evicts first is computed again, see kept in decide).
  local tokens = math.max(0, n * h.chunk - (result[ANSWER.outcome] == OUTCOME.HIT and result[ANSWER.saved_tokens] or 0))
  local by_engine = keys.reserved .. engine
  local value = engine .. '|' .. now_text .. '|' .. tokens .. '|' .. h.client
  -- A request id sent again replaces its reservation instead of counting twice; a new one (nearly
  -- every call) costs one HSETNX, not a read and a write.
  if redis.call('HSETNX', res, request, value) == 0 then
    release(res, request)
    redis.call('HSET', res, request, value)
  end
  redis.call('ZADD', keys.by_time, now_text, request)
  scored_at(h.kept, keys.by_time, now)
  redis.call('ZADD', by_engine, now_text, request)
  if h.client ~= '' then
    local key = keys.client .. h.client
    redis.call('HINCRBY', key, engine, '1')
    redis.call('PEXPIRE', key, ttl_text)
  end
  local ready = now
  if h.prefill_rate then
    local rate = h.engines[engine].rate
    local queued = (h.backlog[engine] or 0) + tokens / rate * 1000
    ready = now + math.ceil(queued)
    redis.call('HSET', keys.prefill, engine, string.format('t%.1f|%d', queued * rate / 1000, now))
    -- An engine whose queue drained long ago leaves the hash (engines come and go).
    for id, left in pairs(h.backlog) do
      if left == 0 and id ~= engine and not h.engines[id] then redis.call('HDEL', keys.prefill, id) end
    end
    redis.call('PEXPIRE', keys.prefill, ttl_text)
  end
  sweep(h.kept, keys.by_time, now - ttl, release, res)
  local over = redis.call('ZCARD', by_engine) - RESERVATION_CAP
  if over > 0 then
    for _, old in ipairs(redis.call('ZRANGE', by_engine, 0, over - 1)) do release(res, old) end
  end
  redis.call('PEXPIRE', res, ttl_text)
  redis.call('PEXPIRE', keys.by_time, ttl_text)
  redis.call('PEXPIRE', by_engine, ttl_text)
  written(res, RESERVED, engine, now + ttl)
  -- Without a prefill rate there is no telling when the engine holds the prompt: nothing pending.
  if h.prefill_rate and h.sampled and #h.sampled > 0 then pend(h, engine, ready, result[ANSWER.matched_blocks]) end
end

