-- Engine table value: status|waiting|running|kv_permille|tau_ms|epoch|unsynced|load_ms|role|slots|prefill_tps|slot_ms[|kv_free_tokens]
-- (read with one pattern: every pick parses every engine, and one match costs a third less than a split).
local ENGINE_FIELDS = '^([^|]*)|?([^|]*)|?([^|]*)|?([^|]*)|?([^|]*)|?([^|]*)|?([^|]*)|?([^|]*)|?([^|]*)|?([^|]*)|?([^|]*)|?([^|]*)|?([^|]*)'
local function engine_fields(v)
  local status, waiting, running, kv, tau, epoch, unsynced, load_ms, role, slots, prefill_rate, slot_ms, kv_free =
    string.match(v, ENGINE_FIELDS)
  return {
    status = status, waiting = tonumber(waiting) or 0, running = tonumber(running) or 0,
    kv = tonumber(kv) or 0, tau = tonumber(tau) or 1, epoch = epoch, epoch_number = tonumber(epoch),
    unsynced = unsynced == '1', load_ms = tonumber(load_ms) or 0,
    -- The ZCOUNT bound for what came after the report, as written (not turned back into text on every pick).
    after_report = '(' .. (tonumber(load_ms) and load_ms or '0'),
    gone = ENGINE_STATUS[status] ~= nil and ENGINE_STATUS[status].gone,
    decode_only = role == 'DECODE', slots = tonumber(slots) or 0, prefill_rate = tonumber(prefill_rate) or 0,
    slot_ms = tonumber(slot_ms) or 0,
    -- The KV room free at the report, in tokens; nil when the job does not publish it (engine.kv-room).
    kv_free = tonumber(kv_free),
  }
end

-- A parse kept by its text between calls (a library's locals live as long as it is loaded), for the
-- values a pick reads whole on every call though they change far less often: an engine's entry stays
-- the same text from one of its reports to the next, thousands of picks, and parsing every engine on
-- every pick was a third of reading the head. What the memo returns is what parsing gives (it is never
-- written to); bounded: dropped whole once it holds MEMO_CAP texts (each report is a new one).
local MEMO_CAP = 4096
local function memo(parse)
  local parsed, size = {}, 0
  return function(text)
    local value = parsed[text]
    if value == nil then
      if size >= MEMO_CAP then parsed, size = {}, 0 end
      value = parse(text)
      parsed[text] = value
      size = size + 1
    end
    return value
  end
end

-- An engine entry's fields, shared by every pick that reads the same text (see memo).
local engine_fields_of = memo(function(v) return {__index = engine_fields(v)} end)

-- The engine an entry's text describes, as a table of the pick's own: the parsed fields are read
-- through it from the memo, and a pick's own figures (load and the rest) go in the table itself.
local function parse_engine(v)
  -- The figures a pick works out for every engine, sized in (read_engines, learn_unknown, read_backlog).
  return setmetatable({load = 0, rate = 0, free_ms = false, kv_room = false}, engine_fields_of(v))
end

-- Block field value: engine=stored_ms(base 36).epoch(base 36),engine=... (pending values alike, with
-- ready_ms for stored_ms). HOLDER captures one entry: its text, engine, stored_ms and epoch.
local HOLDER = '(([^,=]+)=(%w+)%.(%w+))'
-- A block field's holders (engine -> stored, epoch), shared by every pick that reads the same text
-- (memo: a prompt's first block keeps its text from one store event of it to the next).
local holders = memo(function(v)
  local h = {}
  if v then
    for _, engine, stored, epoch in string.gmatch(v, HOLDER) do
      h[engine] = {stored = tonumber(stored, 36), epoch = tostring(tonumber(epoch, 36))}
    end
  end
  return h
end)

-- How an engine's entry is found in a block field (holder_of): "<engine>=" first, else ",<engine>=".
local entry_marks = memo(function(id) return {id .. '=', ',' .. id .. '='} end)

-- One engine's entry in a block field, without parsing the others: its stored_ms and epoch, both in
-- base 36, or nil. `lead` is "<engine>=" and `mid` ",<engine>=" (made once per engine, not per block).
local function holder_of(v, lead, mid)
  local at
  -- Found in place rather than cut out and compared: a probe makes no string it does not keep.
  if string.find(v, lead, 1, true) == 1 then
    at = #lead + 1
  else
    local s = string.find(v, mid, 1, true)
    if not s then return nil end
    at = s + #mid
  end
  return string.match(v, '^(%w+)%.(%w+)', at)
end

-- A non-negative integer in base 36 (block fields' numbers).
local function to36(x)
  local digits, out = '0123456789abcdefghijklmnopqrstuvwxyz', ''
  x = math.floor(x)
  repeat
    local d = x % 36
    out = string.sub(digits, d + 1, d + 1) .. out
    x = (x - d) / 36
  until x == 0
  return out
end

-- A whole number as the text Redis would make of it, anything else as it is: redis.call formats each
-- number it is given (snprintf, ~0.2 µs), so one a call repeats is formatted once.
local function number_text(x)
  if x == math.floor(x) and x > -2 ^ 53 and x < 2 ^ 53 then return string.format('%d', x) end
  return x
end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

