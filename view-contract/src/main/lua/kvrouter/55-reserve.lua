-- Records the placement as a reservation (request id '' records nothing) and keeps the
-- reservations bounded: expired ones leave (at most SWEEP a call), each engine keeps RESERVATION_CAP.
local function reserve(h, result, request, n)
  local engine = result[ANSWER.engine]
  if request == '' or engine == '' then return end
  local res, now, ttl = h.res, h.now, h.res_ttl
  release(res, request) -- a request id sent again replaces its reservation instead of counting twice
  -- The prefill it queues there: the prompt less what the placement expects to find cached (answer
  -- saved_tokens of a HIT: a run the queue ahead evicts first is computed again, see kept in decide).
  local tokens = math.max(0, n * h.chunk - (result[ANSWER.outcome] == OUTCOME.HIT and result[ANSWER.saved_tokens] or 0))
  local by_engine = res .. RESERVED .. engine
  redis.call('HSET', res, request, engine .. '|' .. now .. '|' .. tokens .. '|' .. h.client)
  redis.call('ZADD', res .. RES_KEY.by_time, now, request)
  scored_at(h.kept, res .. RES_KEY.by_time, now)
  redis.call('ZADD', by_engine, now, request)
  if h.client ~= '' then
    local key = res .. RES_KEY.client .. h.client
    redis.call('HINCRBY', key, engine, 1)
    redis.call('PEXPIRE', key, ttl)
  end
  local ready = now
  if h.prefill_rate then
    local rate = h.engines[engine].rate
    local queued = (h.backlog[engine] or 0) + tokens / rate * 1000
    ready = now + math.ceil(queued)
    redis.call('HSET', res .. RES_KEY.prefill, engine, string.format('t%.1f|%d', queued * rate / 1000, now))
    -- An engine whose queue drained long ago leaves the hash (engines come and go).
    for id, left in pairs(h.backlog) do
      if left == 0 and id ~= engine and not h.engines[id] then redis.call('HDEL', res .. RES_KEY.prefill, id) end
    end
    redis.call('PEXPIRE', res .. RES_KEY.prefill, ttl)
  end
  sweep(h.kept, res .. RES_KEY.by_time, now - ttl, function(old) release(res, old) end)
  local over = redis.call('ZCARD', by_engine) - RESERVATION_CAP
  if over > 0 then
    for _, old in ipairs(redis.call('ZRANGE', by_engine, 0, over - 1)) do release(res, old) end
  end
  redis.call('PEXPIRE', res, ttl)
  redis.call('PEXPIRE', res .. RES_KEY.by_time, ttl)
  redis.call('PEXPIRE', by_engine, ttl)
  written(res, RESERVED, engine, now + ttl)
  -- Without a prefill rate there is no telling when the engine holds the prompt: nothing pending.
  if h.prefill_rate and h.sampled and #h.sampled > 0 then pend(h, engine, ready, result[ANSWER.matched_blocks]) end
end

