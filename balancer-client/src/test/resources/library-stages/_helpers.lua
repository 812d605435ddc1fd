-- Appended by LibraryStagesITCase after the library's body (its locals in scope), before one
-- stage's test file; the test file's checks collect in `failures`, which the harness returns.
-- ARGV[1]: a key prefix of the run's own (deleted when it ends), for the few stages that read Redis.
local failures = {}
local prefix = ARGV[1]

-- A failure unless `ok`.
local function check(ok, what)
  if not ok then failures[#failures + 1] = what end
end

-- A failure unless actual == expected (numbers within 1e-9).
local function eq(actual, expected, what)
  local same = actual == expected
  if not same and type(actual) == 'number' and type(expected) == 'number' then same = math.abs(actual - expected) < 1e-9 end
  if not same then failures[#failures + 1] = what .. ': expected ' .. tostring(expected) .. ', got ' .. tostring(actual) end
end

-- An engine as read_head leaves it: ready, 8 slots of 4 s, idle, 10 000 tokens/s, a deep cache.
local function engine(fields)
  local e = {status = 'READY', waiting = 0, running = 0, load = 0, slots = 8, slot_ms = 4000, tau = 600000,
    rate = 10000, prefill_rate = 10000, epoch_number = 1}
  for k, v in pairs(fields or {}) do e[k] = v end
  return e
end

-- A head as read_head and decide leave it (a prompt of 4 blocks of 16 tokens, nobody's run), with
-- `fields` over it.
local function head(fields)
  local h = {now = 1000000, age = 0, max_age = 2000, busy_factor = 2, floor = 0.05, horizon = -math.log(0.05),
    client_cap = 0.5, client_min = 8, chunk = 16, prefill_rate = 10000, miss_weight = 3, price = 0, res_ttl = 60000,
    engines = {}, decoders = {}, backlog = {}, inflight = {}, client = '', client_total = 0, mean = 0, decode_mean = 0,
    free_slots = true, warming = {}, classes = prefix .. 'classes', res = prefix .. 'res',
    n = 4, runs = {}, conf = {}, best_run = 0, waits = {}, refusals = {}, costs = {}}
  for k, v in pairs(fields or {}) do h[k] = v end
  return h
end

-- The answer's fields by name.
local function field(result, name) return result[ANSWER[name]] end

