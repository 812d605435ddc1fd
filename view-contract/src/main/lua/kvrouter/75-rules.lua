-- A client's burst grows a copy of its prompt before the holders fill: a holder with a free slot
-- costs a request nothing, so without this the burst stays on the first holders until every slot
-- there is taken, and only then pays a cold copy elsewhere, behind which the next requests stack
-- while the holders' requests wait seconds for slots. Once the client has client_min requests in
-- flight and no copy is being computed, one request goes cold to a spare (spare_engine) if every
-- holder of the prompt is filling (holders_filling). Once computed the copy is the least loaded
-- holder and the burst spreads there. Other clients' prompts (a conversation's next turn) are never
-- copied this way.
-- The spare: an engine that holds none of the prompt, has no prefill queued and, slots known, at
-- least SPARE_FREE of them free; the cheapest.
local function spare_engine(h)
  local spare, spare_cost
  for id, e in pairs(h.engines) do
    if not h.runs[id] and (h.backlog[id] or 0) == 0 and (e.slots == 0 or e.slots - e.load >= SPARE_FREE * e.slots)
        and not refused(h, id) then
      local c = cost(h, id, h.runs)
      if cheaper(h, id, c, spare, spare_cost) then spare, spare_cost = id, c end
    end
  end
  return spare
end
-- Every holder of the prompt is filling: with this request it has used WARM_AT of its slots, or,
-- while its slots are not known yet (a fleet's first seconds: slots are learned when an engine first
-- queues), it carries busy_factor times the spare's load (each plus this request).
local function holders_filling(h, spare)
  for id in pairs(h.runs) do
    local e = h.engines[id]
    if near_best(h, id) then
      local filling
      if e.slots > 0 then
        filling = e.load + 1 >= WARM_AT * e.slots
      else
        filling = e.load + 1 >= h.busy_factor * (h.engines[spare].load + 1)
      end
      if not filling then return false end
    end
  end
  return true
end
local function spare_for_burst(h)
  if not h.prefill_rate or h.client == '' or h.client_total + 1 < h.client_min then return nil end
  -- A copy on its way (a pending run is a lower bound within 2x of the shared run: see PENDING_MS).
  for id, run in pairs(h.warming) do
    if h.engines[id] and run * 2 >= h.best_run then return nil end
  end
  local spare = spare_engine(h)
  if spare and holders_filling(h, spare) then return spare end
  return nil
end

-- Milliseconds as the answer writes them, to a tenth; a zero (most answers' hand-off and added wait)
-- without a string.format, ~1 us each.
local function tenths(ms)
  return ms == 0 and '0.0' or string.format('%.1f', ms)
end

-- Disaggregated serving: the least loaded decode engine that is ready and not hot (else the least
-- loaded), and the whole prompt's KV hand-off to it, on the TTFT path whatever the cache saved.
local function decode_handoff(h, result)
  local best, best_load, fallback, fallback_load = '', math.huge, '', math.huge
  for id, e in pairs(h.decoders) do
    if e.load < fallback_load or (e.load == fallback_load and id < fallback) then fallback, fallback_load = id, e.load end
    local fit = not unavailable(e) and not (e.load > h.busy_factor * math.max(h.decode_mean, 1))
    if fit and (e.load < best_load or (e.load == best_load and id < best)) then best, best_load = id, e.load end
  end
  if best == '' then best = fallback end
  local handoff_ms = 0
  if best ~= '' and h.kv_bytes and h.fabric then handoff_ms = h.n * h.chunk * h.kv_bytes / h.fabric * 1000 end
  result[ANSWER.decode_engine] = best
  result[ANSWER.handoff_ms] = tenths(handoff_ms)
  return result
end

-- The answer (see decide for its fields), with the cost view: what the placement is expected to
-- save. A hit skips the matched prefill as far as the run outlasts the prefill queued ahead (kept);
-- when the request lands away from the best holder, moving that holder's KV pays if it is faster
-- than recomputing it (a transfer); else it is a cold start.
local function answer(h, id, run, reason, confidence)
  local result = {}
  result[ANSWER.engine], result[ANSWER.matched_blocks], result[ANSWER.reason] = id, run, reason
  result[ANSWER.view_age_ms], result[ANSWER.confidence] = h.age, confidence or '0'
  local outcome, tokens, saved_ms = OUTCOME.COLD, 0, 0
  local rate = h.engines[id] and h.engines[id].rate or h.prefill_rate
  if run > 0 then
    outcome, tokens = OUTCOME.HIT, math.floor(run * h.chunk * kept(h, id) + 0.5)
    if rate then saved_ms = tokens / rate * 1000 end
  elseif h.best_run > 0 and h.kv_bytes and rate and h.fabric then
    local t = h.best_run * h.chunk
    local transfer_ms = t * h.kv_bytes / h.fabric * 1000
    local prefill_ms = t / rate * 1000
    if transfer_ms < prefill_ms then
      outcome, tokens, saved_ms = OUTCOME.TRANSFER, t, prefill_ms - transfer_ms
    end
  end
  result[ANSWER.outcome] = outcome
  result[ANSWER.saved_tokens] = tokens
  result[ANSWER.saved_usd] = tokens == 0 and '0.000000' or string.format('%.6f', tokens * h.price / 1000000)
  result[ANSWER.saved_prefill_ms] = tenths(saved_ms)
  result[ANSWER.best_match] = h.best_run
  result[ANSWER.added_wait_ms] = tenths(added_wait(h, id))
  return decode_handoff(h, result)
end

-- A placement on an engine that may hold a run of the prompt: REPLICA when it does, else `spilled`.
local function placed(h, id, spilled)
  local d = h.runs[id] or 0
  if d > 0 then return answer(h, id, d, REASON.REPLICA, string.format('%.4f', h.conf[id])) end
  return answer(h, id, 0, spilled)
end

-- The rules, in order. match() returns each holder's longest consecutive run of blocks from the
-- first and its confidence; it is called only when the view is fresh enough, also for a class
-- whose affinity is off (what affinity would have matched is the evidence that turns it back on).
-- Returns: engine, matched blocks, reason, view age ms, confidence (string), expected outcome (HIT,
--          TRANSFER, COLD), prompt tokens it saves recomputing, their price in dollars (string),
--          prefill milliseconds saved (string), decode engine ('' unless the fleet has a DECODE
--          pool), prefill-to-decode hand-off ms on the TTFT path (string), the blocks the best
--          holder matches whichever engine was chosen (what affinity would match), and the wait it
--          adds (string, ms; added_wait). The saving and the added wait are what decided.
local function decide(h, n, class, max_age, match)
  h.n, h.max_age, h.best_run, h.runs, h.waits, h.refusals, h.costs = n, max_age, 0, NO_RUNS, {}, {}, {}
  if h.age > max_age or n == 0 then
    return answer(h, least_loaded(h), 0, h.age > max_age and REASON.FALLBACK_LOAD_ONLY or REASON.COLD)
  end
  local runs, conf = match()
  h.runs, h.conf = runs, conf
  for _, d in pairs(runs) do
    if d > h.best_run then h.best_run = d end
  end
  -- A class an operator turned off (the job never does: the cost prices affinity per request) is
  -- placed as if nobody held its prompt; the best holder's match still goes back with the answer.
  if class ~= '' and redis.call('HGET', h.classes, class) == 'off' then
    return answer(h, h.prefill_rate and soonest(h, NO_RUNS) or least_loaded(h), 0, REASON.NO_AFFINITY_CLASS)
  end
  -- Nobody holds it: the least cost (cold copies placed together would wait on each other's prefill).
  if next(runs) == nil then return answer(h, h.prefill_rate and soonest(h, runs) or least_loaded(h), 0, REASON.COLD) end
  local first = best_holder(h)
  local why = refused(h, first)
  if not why then
    local spare = spare_for_burst(h)
    if spare then return placed(h, spare, REASON.BURST_COPY) end
    -- Another engine takes the request from the best holder only at strictly less cost (prefill
    -- queued on the holder, its slots all taken, no KV room, or a holder that prefills slower than
    -- the others), and the term that made the difference is the reason.
    local best = h.prefill_rate and not cheapest_by_bound(h, first, runs) and soonest(h, runs)
    if best and cost(h, best, runs) < cost(h, first, runs) then return placed(h, best, costlier_by(h, first, best, runs)) end
    return answer(h, first, runs[first], REASON.AFFINITY, string.format('%.4f', conf[first]))
  end
  -- The best holder cannot take it: the least cost elsewhere (another holder's run and every
  -- engine's queued prefill weigh in, so spilled requests do not stack cold prefills of the same
  -- prompt on one engine); without the prefill rate, the next holder by rank.
  if h.prefill_rate then
    local best = soonest(h, runs)
    if best then return placed(h, best, why) end
  else
    local id = next_holder(h)
    if id then return answer(h, id, runs[id], REASON.REPLICA, string.format('%.4f', conf[id])) end
  end
  return answer(h, least_loaded(h), 0, why)
end

