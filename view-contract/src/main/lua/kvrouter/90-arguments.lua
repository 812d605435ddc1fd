-- The engines of a comma-separated list, as a set ('' or nil: none).
local function engine_set(list)
  local set = {}
  for id in string.gmatch(list or '', '[^,]+') do set[id] = true end
  return set
end

-- The arguments, checked before anything is read or written: a call that cannot be right (a
-- number that is not a whole one in range, hashes that are not 16 hex digits each, runs no match
-- could give, an id or label too long, an argument more than the function takes) is refused whole,
-- with the reason, and leaves every key as it was. What is accepted can neither loop (n bounds
-- every loop over the prompt), nor wait forever (hold_ms is bounded), nor queue a prefill that is
-- not a real time (n and the runs bound the uncached tokens).
local MAX_VIEW_AGE_MS, MAX_BLOCKS, MAX_HOLD_MS, MAX_ID, MAX_AVOID = 1e12, 65536, 600000, 1024, 65536

-- A whole number written in decimal digits, at most `max`; nil otherwise.
local function whole(v, max)
  if type(v) ~= 'string' or #v == 0 or #v > 15 or string.find(v, '[^0-9]') then return nil end
  local x = tonumber(v)
  if x > max then return nil end
  return x
end

-- A value as an error message shows it: at most 40 characters of it.
local function shown(v)
  if v == nil then return 'nothing' end
  return #v > 40 and ("'" .. string.sub(v, 1, 40) .. "...' (" .. #v .. ' characters)') or ("'" .. v .. "'")
end

-- The arguments every placement takes first: max_view_age_ms, prefix class, client id, request id, n.
-- Returns n, or nil and what is wrong.
local function placement_arguments(args, least)
  if #args < least then return nil, string.format('expected at least %d arguments, got %d', least, #args) end
  if not whole(args[1], MAX_VIEW_AGE_MS) then return nil, 'max_view_age_ms must be a whole number of ms up to 10^12, got ' .. shown(args[1]) end
  for i, name in ipairs({'the prefix class', 'the client id', 'the request id'}) do
    if #args[i + 1] > MAX_ID then return nil, name .. ' is over ' .. MAX_ID .. ' characters: ' .. shown(args[i + 1]) end
  end
  local n = whole(args[5], MAX_BLOCKS)
  if not n then return nil, 'n must be a whole number of blocks up to ' .. MAX_BLOCKS .. ', got ' .. shown(args[5]) end
  return n
end

-- The optional tail every placement takes last, from position `at`: the engines to avoid, hold_ms.
local function tail_arguments(args, at)
  if #args > at + 1 then return string.format('expected at most %d arguments, got %d', at + 1, #args) end
  if args[at] and #args[at] > MAX_AVOID then return 'the engines to avoid are over ' .. MAX_AVOID .. ' characters' end
  local hold = args[at + 1]
  if hold and hold ~= '' and not whole(hold, MAX_HOLD_MS) then
    return 'hold_ms must be empty or a whole number of ms up to ' .. MAX_HOLD_MS .. ', got ' .. shown(hold)
  end
  return nil
end

