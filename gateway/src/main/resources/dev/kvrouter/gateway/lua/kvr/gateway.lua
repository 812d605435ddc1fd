-- nginx routes OpenAI-compatible requests by kv-router's view (gateway/README.md).
--
--   init_by_lua_block    { require("kvr.gateway").configure{ ... } }   -- nginx.conf.template
--   access_by_lua_block  { require("kvr.gateway").access() }    -- body, hashes, kvr_pick (cosockets work here)
--   balancer_by_lua_block{ require("kvr.gateway").balance() }   -- the peer; the next one on a failed connect
--   body_filter_by_lua_block { require("kvr.gateway").body_filter() } -- first byte, the engine's usage
--   log_by_lua_block     { require("kvr.gateway").log() }       -- kvr_done from a timer, whatever ended the response
--
-- Every request is routed: when the view cannot answer (Redis away or slow, NO_VIEW, the library
-- missing, NOPERM, another layout) it goes to the engine with the fewest requests in flight through
-- this nginx (a shared dict), and the reason is counted and logged. An engine a try failed on is left
-- out of both for fail_timeout_ms (see failed_lately).
local cjson = require "cjson.safe"
local semaphore = require "ngx.semaphore"
local resp = require "kvr.resp"
local blockhash = require "kvr.blockhash"
-- The view's contract (function names, keys, answer positions, reasons), generated from
-- view-contract's kvr-view.yaml.
local contract = require "kvr.contract"
local A, REASON = contract.answer, contract.reasons

local _M = {}

local ngx = ngx
local ngx_var = ngx.var
local log, WARN, ERR = ngx.log, ngx.WARN, ngx.ERR
local concat = table.concat

local MAX_BLOCKS = 65536

local config
local engines_by_id = {}
local engine_ids = {}
local stats -- the shared dict: in-flight counts ("c:<engine>"), counters ("n:<name>"), failed engines ("f:<engine>")

local DEFAULTS = {
  key_prefix = "kvr:", chunk_tokens = 16, model = nil, lora = "",
  max_view_age_ms = 2000, hold_ms = 0, hold_poll_ms = 25, fail_timeout_ms = 10000,
  client_header = "X-Client-Id", class_header = "X-Prefix-Class",
  shared_dict = "kvr_gateway", keepalive_ms = 60000,
  redis = {host = "127.0.0.1", port = 6379, timeout_ms = 100, connect_timeout_ms = 200, pool_size = 32},
}

local function with_defaults(given, defaults)
  local out = {}
  for k, v in pairs(defaults) do out[k] = v end
  for k, v in pairs(given or {}) do
    if type(v) == "table" and type(defaults[k]) == "table" then out[k] = with_defaults(v, defaults[k]) else out[k] = v end
  end
  return out
end

--- Checks the configuration once, reporting every problem at once (nginx then refuses to start).
function _M.configure(given)
  local c = with_defaults(given, DEFAULTS)
  local problems = {}
  local function need(ok, message) if not ok then problems[#problems + 1] = message end end
  need(type(c.model) == "string" and c.model ~= "", "model: the served model name the view's hashes are rooted in (as the job's)")
  need(type(c.engines) == "table" and #c.engines > 0, "engines: at least one {id = ..., address = 'host:port'}")
  for i, e in ipairs(type(c.engines) == "table" and c.engines or {}) do
    local host, port
    if type(e.address) == "string" then host, port = e.address:match("^([^:]+):(%d+)$") end
    need(type(e.id) == "string" and e.id ~= "" and not e.id:find("[,=|]"), "engines[" .. i .. "].id: an engine id as the view names it (no , = |)")
    need(host ~= nil, "engines[" .. i .. "].address: host:port, got " .. tostring(e.address))
    if host then e.host, e.port = host, tonumber(port) end
  end
  need(math.floor(c.chunk_tokens) == c.chunk_tokens and c.chunk_tokens > 0, "chunk_tokens: a whole number of tokens > 0")
  need(c.max_view_age_ms >= 0, "max_view_age_ms: >= 0")
  need(c.hold_ms >= 0 and c.hold_ms <= 600000, "hold_ms: 0 (never hold) to 600000")
  need(c.hold_poll_ms > 0, "hold_poll_ms: > 0")
  need(c.fail_timeout_ms >= 0, "fail_timeout_ms: 0 (never leave a failed engine out) or more")
  need(not c.key_prefix:find("[{}]"), "key_prefix: no braces (they make Redis Cluster hash tags)")
  need(c.redis.timeout_ms > 0, "redis.timeout_ms: > 0")
  if c.redis.password_file then
    -- The password stays out of nginx's configuration: read once, here, from an owner-only file.
    local f, ferr = io.open(c.redis.password_file, "r")
    need(f ~= nil, "redis.password_file: cannot read " .. tostring(c.redis.password_file) .. ": " .. tostring(ferr))
    if f then
      c.redis.password = f:read("*a"):gsub("[\r\n]+$", "")
      f:close()
    end
  end
  if #problems > 0 then error("kvr.gateway: the configuration has " .. #problems .. " problem(s):\n  " .. concat(problems, "\n  "), 0) end
  config = c
  engines_by_id, engine_ids = {}, {}
  for _, e in ipairs(c.engines) do
    engines_by_id[e.id] = e
    engine_ids[#engine_ids + 1] = e.id
  end
  stats = ngx.shared[c.shared_dict]
  if not stats then error("kvr.gateway: lua_shared_dict " .. c.shared_dict .. " is not declared", 0) end
end

local function count(name, by)
  stats:incr("n:" .. name, by or 1, 0)
end

local function in_flight(id)
  return stats:get("c:" .. id) or 0
end

-- Engines a try failed on lately (refused, timed out, answered 502 or 503: the balancer phase), each
-- for fail_timeout_ms (the shared dict's own expiry), as nginx's max_fails=1 fail_timeout does for its
-- balancers. The view learns an engine is gone only once its reports stop, seconds later, and least
-- connections alone prefers an engine that fails fast, having nothing in flight there: left alone,
-- both would send it request after request, each paying a failed try first.
local function failed_lately(id)
  return stats:get("f:" .. id) ~= nil
end

local function mark_failed(id)
  if config.fail_timeout_ms > 0 then
    stats:set("f:" .. id, true, config.fail_timeout_ms / 1000)
    count("engine_failed")
  end
end

-- The engines the view's pick must leave out (kvr_pick's avoid argument): those that failed lately,
-- unless every one did (then none: the view's own statuses decide).
local function avoided()
  local list = {}
  for _, id in ipairs(engine_ids) do
    if failed_lately(id) then list[#list + 1] = id end
  end
  if #list == #engine_ids then return "" end
  return concat(list, ",")
end

-- The engine with the fewest requests in flight through this nginx, skipping `tried` and, while
-- another is left, those that failed lately (ties: the order the engines are configured in, from a
-- rotating start so that ties spread).
local function least_connections(tried)
  local best, best_n, best_failed
  local start = (stats:incr("n:rotation", 1, 0) % #engine_ids)
  for i = 1, #engine_ids do
    local id = engine_ids[(start + i - 1) % #engine_ids + 1]
    if not (tried and tried[id]) then
      local n, failed = in_flight(id), failed_lately(id)
      if not best or (best_failed and not failed) or (failed == best_failed and n < best_n) then
        best, best_n, best_failed = id, n, failed
      end
    end
  end
  return best
end

-- Why the view could not answer, as a counter's name.
local function failure_kind(err, redis_error)
  if not redis_error then
    if err == "timeout" then return "redis_timeout" end
    return "redis_away"
  end
  if err:find("^NOPERM") then return "redis_noperm" end
  if err:find("Function not found") or err:find("function not found") then return "no_library" end
  if err:find("layout") then return "layout_mismatch" end
  return "redis_error"
end


-- One kvr_pick (layout 9: its one key is the reservations key, the library finds the view's keys
-- from it); returns the answer (a list) or nil, the failure kind, the message.
local function pick(conn, args)
  local reply, err, redis_error = conn:call("FCALL", contract.functions.kvr_pick, 1, config.key_prefix .. contract.keys.reservations, unpack(args))
  if not reply then return nil, failure_kind(err, redis_error), err end
  if type(reply) ~= "table" or #reply < contract.answer_size then return nil, "bad_answer", "kvr_pick answered " .. tostring(reply) end
  return reply
end

-- The waiting line of this worker's held requests (every engine full, kvr_pick answered HOLD), oldest
-- first, as the Java client keeps its own: only the oldest asks kvr_pick again, every hold_poll_ms
-- (the others would be told HOLD too: the library's waiting room lets requests in in the order they
-- were first held), and each placed one wakes the next, which asks at once, so a slot freed for each
-- of several goes to each; the oldest keeps the others' places with kvr_holding every HOLD_KEEP_S
-- (the library forgets a request nobody asked for or kept for a second). One request asking each poll
-- instead of every held one: a burst held at several nginx cost Redis a pick per held request every
-- 25 ms, and the picks then timed out together (BENCHMARKS.md, "nginx in front of HTTP engines").
local line = {}
local kept_at = 0
local HOLD_KEEP_S = 0.25

-- Leaves the line; the next one, now first, asks at once.
local function leave_line(me)
  for i, r in ipairs(line) do
    if r == me then
      table.remove(line, i)
      break
    end
  end
  if line[1] then line[1].wake:post(1) end
end

-- Waits in line until the request's pick answers other than HOLD, or past hold_ms (hold_expired);
-- returns as pick does.
local function wait_in_line(request_id, args)
  local me = {id = request_id, wake = semaphore.new()}
  line[#line + 1] = me
  local deadline = ngx.now() * 1000 + config.hold_ms
  while true do
    me.wake:wait(config.hold_poll_ms / 1000)
    -- Past hold_ms the library places a request as if it had never waited; a few polls later than
    -- that (the view's clock against this one) the gateway stops asking.
    ngx.update_time()
    if ngx.now() * 1000 >= deadline + 4 * config.hold_poll_ms then
      leave_line(me)
      return nil, "hold_expired", "held " .. config.hold_ms .. " ms"
    end
    if line[1] == me then
      local conn, err = resp.connect(config.redis)
      if not conn then
        leave_line(me)
        return nil, failure_kind(err, false), err
      end
      if #line > 1 and ngx.now() - kept_at >= HOLD_KEEP_S then
        kept_at = ngx.now()
        local ids = {}
        for i = 2, #line do ids[#ids + 1] = line[i].id end
        -- (A failure here costs the others their places at worst: they are placed when they ask.)
        conn:call("FCALL", contract.functions.kvr_holding, 1, config.key_prefix .. contract.keys.reservations, unpack(ids))
      end
      local answer, kind, message = pick(conn, args)
      conn:release(config.keepalive_ms, config.redis.pool_size)
      if not answer or answer[A.reason] ~= REASON.HOLD then
        leave_line(me)
        return answer, kind, message
      end
    end
  end
end

--- The access phase: reads the body, finds the token ids, asks the view; sets ngx.ctx.kvr.
function _M.access()
  local k = {tried = {}, route = "load_only", reason = "", request_id = ngx_var.request_id}
  ngx.ctx.kvr = k
  local headers = ngx.req.get_headers(32)
  local client = headers[config.client_header] or ""
  local class = headers[config.class_header] or ""
  if type(client) == "table" then client = client[1] end
  if type(class) == "table" then class = class[1] end
  k.client, k.class = client:sub(1, 256), class:sub(1, 256)

  local packed, n
  local uri = ngx_var.uri
  if ngx.req.get_method() == "POST" and (uri == "/v1/completions" or uri == "/v1/chat/completions") then
    ngx.req.read_body()
    local body = ngx.req.get_body_data()
    if not body then
      -- client_body_buffer_size equals client_max_body_size (nginx.conf.template), so a body that
      -- fits is in memory: none here means an empty body.
      k.why = "no_body"
    else
      -- The body's decoding CPU (os.clock: this worker's), a counter beside the hashing's.
      local decoding = os.clock()
      local request = cjson.decode(body)
      count("decode_cpu_seconds", os.clock() - decoding)
      local prompt = type(request) == "table" and request.prompt
      if type(request) == "table" and request.stream == true and request.stream_options == nil then
        -- A stream reports the engine's usage (the cached tokens an outcome counts) only when asked:
        -- ask for it, textually (re-encoding could turn an empty list into an object), and take the
        -- extra event out of what the client receives (body_filter).
        local at = body:find("{", 1, true)
        ngx.req.set_body_data(body:sub(1, at) .. '"stream_options":{"include_usage":true},' .. body:sub(at + 1))
        k.strip_usage = true
      end
      if type(request) ~= "table" then
        k.why = "not_json"
      elseif request.prompt == nil and request.messages == nil then
        k.why = "no_prompt" -- the engine refuses it with its own reason
      elseif request.model ~= nil and request.model ~= config.model then
        -- Another model or a LoRA adapter: its blocks hash from another root than this gateway's.
        k.why = "other_model"
      elseif uri == "/v1/completions" and type(prompt) == "table" and type(prompt[1]) == "number" then
        -- The hashing's CPU time (os.clock: this worker's, to the microsecond) and blocks, as counters.
        local started = os.clock()
        packed, n = blockhash.packed(config.model, config.lora, prompt, config.chunk_tokens, MAX_BLOCKS)
        count("hash_cpu_seconds", os.clock() - started)
        if packed then count("hashed_blocks", n) end
        if not packed then
          k.why = "bad_tokens"
          log(WARN, "kvr: routing on load alone: ", n)
        end
      elseif uri == "/v1/completions" and type(prompt) == "table" and type(prompt[1]) == "table" then
        k.why = "batch" -- several prompts in one request: no one engine holds them all
      else
        -- Text (a string prompt, chat messages): not tokenized here yet; routed on load alone.
        k.why = "text"
      end
    end
  else
    k.why = "not_a_completion"
  end

  -- (A prompt shorter than a chunk has no hashes: the view still places it, by load, and counts it.)
  if packed then
    k.n = n
    k.packed = packed
    local conn, err = resp.connect(config.redis)
    if not conn then
      -- (resp.connect names a refused AUTH "auth: ..." and a failed handshake "tls: ...")
      k.why = (err:find("^auth") and "redis_auth") or (err:find("^tls") and "redis_tls")
          or (err:find("timeout") and "redis_timeout") or "redis_away"
      log(WARN, "kvr: routing on load alone, Redis: ", err)
    else
      local args = {config.max_view_age_ms, k.class, k.client, k.request_id, n, packed, avoided(), config.hold_ms > 0 and config.hold_ms or ""}
      local answer, kind, message = pick(conn, args)
      conn:release(config.keepalive_ms, config.redis.pool_size)
      if answer and answer[A.reason] == REASON.HOLD then
        -- Every engine is full: the request waits here, in this worker's line, and asks again.
        count("held")
        k.held = true
        answer, kind, message = wait_in_line(k.request_id, args)
      end
      if answer and answer[A.engine] ~= "" and answer[A.engine] ~= ngx.null then
        local engine = answer[A.engine]
        k.reserved = true -- kvr_done releases it, whatever happens below
        if engines_by_id[engine] then
          k.engine, k.route, k.reason = engine, "view", answer[A.reason]
          k.answer = answer
        else
          k.why = "unknown_engine"
          log(WARN, "kvr: the view picked ", engine, ", which is not in this gateway's engines: load alone")
        end
      elseif answer then
        k.why = answer[A.reason] == REASON.NO_VIEW and "no_view" or "no_engine"
        k.reserved = answer[A.reason] == REASON.HOLD -- (a held request's place in the waiting room)
      else
        k.why = kind
        -- A pick that timed out or lost its connection was sent: Redis may still run it once it
        -- catches up (a burst's picks queue behind each other) and reserve an engine this request
        -- never goes to. Released like any reservation, a little later (log).
        k.late_pick = kind == "redis_timeout" or kind == "redis_away"
        k.reserved = k.held or k.late_pick
        log(WARN, "kvr: routing on load alone, the view did not answer (", kind, "): ", message)
      end
    end
  end

  if not k.engine then
    k.engine = least_connections(nil)
    k.reason = ""
  end
  count("route_" .. k.route)
  if k.why then count("load_only_" .. k.why) end
  ngx.header["X-Kvr-Route"] = k.route .. (k.why and ("; " .. k.why) or "")
  ngx_var.kvr_engine = k.engine
  ngx_var.kvr_route = k.route
  ngx_var.kvr_reason = k.reason ~= "" and k.reason or (k.why or "")
  ngx_var.kvr_client = k.client
  ngx_var.kvr_class = k.class
  if k.answer then
    local a = k.answer
    ngx_var.kvr_predicted = a[A.matched_blocks]
    ngx_var.kvr_best_holder = a[A.best_match]
    ngx_var.kvr_saved_ms = a[A.saved_prefill_ms]
    ngx_var.kvr_added_wait_ms = a[A.added_wait_ms]
    ngx_var.kvr_blocks = k.packed
  end
end

local done -- (below: follow ends with it when the request ended first)

-- Moves the reservation to the engine a retry went to: the same request id, every other engine
-- avoided, so the pick can only answer that one (kvr_pick: "under the same request id, the
-- reservation moves"). Timers run in any order: a move that landed after the request's kvr_done
-- would make the reservation again and leave it to its TTL, so while a move is on its way the log
-- phase leaves kvr_done to the last move (k.moving, k.ended; one worker runs both, one at a time).
local function follow(premature, k, engine)
  if not premature then
    local conn = resp.connect(config.redis)
    if conn then
      local avoid = {}
      for _, id in ipairs(engine_ids) do if id ~= engine then avoid[#avoid + 1] = id end end
      local answer = pick(conn, {config.max_view_age_ms, k.class,
        k.client, k.request_id, k.n or 0, k.packed or "", concat(avoid, ","), ""})
      conn:release(config.keepalive_ms, config.redis.pool_size)
      if not answer then count("follow_failed") end
    else
      count("follow_failed")
    end
  end
  k.moving = k.moving - 1
  if k.moving == 0 and k.ended then done(premature, k.request_id) end
end

--- The balancer phase: the peer; on a retry (connect failed, the engine refused) the engine with the
--- fewest requests in flight that was not tried yet, and the reservation follows it.
function _M.balance()
  local balancer = require "ngx.balancer"
  local k = ngx.ctx.kvr
  if not k then
    -- access() did not run (a subrequest or an internal redirect): route on load alone.
    k = {tried = {}, engine = least_connections(nil), route = "load_only", why = "no_access_phase"}
    ngx.ctx.kvr = k
  end
  local state = balancer.get_last_failure()
  if state then
    k.tried[k.engine] = true
    mark_failed(k.engine)
    stats:incr("c:" .. k.engine, -1, 0)
    local next_engine = least_connections(k.tried)
    if not next_engine then return ngx.exit(502) end
    count("retried")
    if k.reserved and k.packed and ngx.timer.at(0, follow, k, next_engine) then k.moving = (k.moving or 0) + 1 end
    k.engine = next_engine
    ngx_var.kvr_engine = next_engine
  else
    local tries = math.min(#engine_ids, 3) - 1
    if tries > 0 then balancer.set_more_tries(tries) end
  end
  local e = engines_by_id[k.engine]
  ngx.update_time()
  k.sent_ms = ngx.now() * 1000 -- (the time to first byte counts from the last try)
  stats:incr("c:" .. k.engine, 1, 0)
  k.counted = true
  local ok, err = balancer.set_current_peer(e.host, e.port)
  if not ok then log(ERR, "kvr: set_current_peer ", e.address, ": ", err) end
end

-- The last bytes of a response kept to read the engine's usage from (its last event, or the body).
local TAIL_BYTES = 16384

-- The usage an OpenAI-compatible answer reports: the whole body, or the last SSE event that has one.
local function usage_of(tail)
  local whole = cjson.decode(tail)
  if type(whole) == "table" and type(whole.usage) == "table" then return whole.usage end
  local found
  for data in tail:gmatch("data: ([^\n]+)") do
    if data:find('"usage"', 1, true) then
      local event = cjson.decode(data)
      if type(event) == "table" and type(event.usage) == "table" then found = event.usage end
    end
  end
  return found
end

--- The body filter: when the engine's first byte reached nginx (a stream's first token; the whole
--- answer otherwise) and, at the end, the usage the engine reports: the cached prompt tokens count
--- block hits, never the view's own prediction. Bounded: only the last TAIL_BYTES are kept.
function _M.body_filter()
  local k = ngx.ctx.kvr
  if not k then return end
  local chunk, eof = ngx.arg[1], ngx.arg[2]
  if chunk ~= "" then
    if not k.first_ms and k.sent_ms then
      ngx.update_time()
      k.first_ms = ngx.now() * 1000
      ngx_var.kvr_ttft_ms = string.format("%.1f", k.first_ms - k.sent_ms)
    end
    local tail = (k.tail or "") .. chunk
    if #tail > TAIL_BYTES then tail = tail:sub(-TAIL_BYTES) end
    k.tail = tail
    if k.strip_usage and chunk:find('"usage"', 1, true) then
      -- The usage event the gateway asked for (access): read above, not sent on. An event split
      -- across two chunks goes through as it is.
      ngx.arg[1] = chunk:gsub("data: ({[^\n]*})\n\n", function(data)
        if data:find('"choices":%s*%[%s*%]') and data:find('"usage":%s*{') then return "" end
      end)
    end
  end
  if eof and k.tail then
    local usage = usage_of(k.tail)
    k.tail = nil
    if usage then
      local details = type(usage.prompt_tokens_details) == "table" and usage.prompt_tokens_details or {}
      if type(usage.prompt_tokens) == "number" then ngx_var.kvr_prompt_tokens = usage.prompt_tokens end
      if type(usage.completion_tokens) == "number" then ngx_var.kvr_output_tokens = usage.completion_tokens end
      if type(details.cached_tokens) == "number" then ngx_var.kvr_cached_tokens = details.cached_tokens end
    end
  end
end

done = function(premature, request_id)
  local conn, err = resp.connect(config.redis)
  if not conn then
    count("done_failed")
    return
  end
  local reply, derr = conn:call("FCALL", contract.functions.kvr_done, 1, config.key_prefix .. contract.keys.reservations, request_id)
  conn:release(config.keepalive_ms, config.redis.pool_size)
  if reply == nil then
    count("done_failed")
    log(WARN, "kvr: kvr_done ", request_id, ": ", derr)
  end
end

local LATE_PICK_S = 1

--- The log phase: the request ended (complete, streamed, aborted by the client, failed upstream):
--- its in-flight count and its reservation go. Cosockets do not work here: kvr_done runs in a timer.
function _M.log()
  local k = ngx.ctx.kvr
  if not k then return end
  if k.counted then stats:incr("c:" .. k.engine, -1, 0) end
  if k.reserved and (k.moving or 0) > 0 then
    k.ended = true -- the last move sends kvr_done (follow)
  elseif k.reserved then
    -- After a pick that may still run late, kvr_done waits LATE_PICK_S so that it comes after it
    -- (a pick later than that lapses at the reservation TTL).
    local ok, err = ngx.timer.at(k.late_pick and LATE_PICK_S or 0, done, k.request_id)
    if not ok then
      count("done_failed")
      log(WARN, "kvr: cannot schedule kvr_done (the reservation lapses at its TTL): ", err)
    end
  end
end

--- The gateway's counters in Prometheus' text format (location /kvr-metrics).
function _M.metrics()
  local lines = {}
  for _, key in ipairs(stats:get_keys(1024)) do
    local v = stats:get(key)
    local kind, name = key:match("^(%a):(.*)$")
    if kind == "n" and name ~= "rotation" then
      lines[#lines + 1] = "kvr_gateway_" .. name .. "_total " .. tostring(v)
    elseif kind == "c" then
      lines[#lines + 1] = 'kvr_gateway_in_flight{engine="' .. name .. '"} ' .. tostring(v)
    elseif kind == "f" then
      lines[#lines + 1] = 'kvr_gateway_failed_lately{engine="' .. name .. '"} 1'
    end
  end
  table.sort(lines)
  ngx.header["Content-Type"] = "text/plain; version=0.0.4"
  ngx.say(concat(lines, "\n"))
end

return _M
