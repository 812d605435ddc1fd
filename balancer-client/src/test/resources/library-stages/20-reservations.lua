-- The sweeps (20-reservations.lua): a by-time key's members scored below a time leave, at most SWEEP
-- a call, and the kept bound on its scores spares the read while nothing is due.
local key = prefix .. 'by-time'
local dropped = {}
local function drop(by_time, member)
  dropped[#dropped + 1] = member
  redis.call('ZREM', by_time, member)
end
local function swept(k, before)
  dropped = {}
  sweep(k, key, before, drop, key)
  table.sort(dropped)
  return table.concat(dropped, ',')
end

local k = {oldest = {}}
redis.call('ZADD', key, 100, 'a', 200, 'b', 5000, 'c')
eq(swept(k, 1000), 'a,b', 'the members due leave')
eq(k.oldest[key], 5000, 'the bound: the least score left')

-- A member written without scored_at is not seen while the bound says nothing is due: every score
-- this library writes goes through scored_at, so one written elsewhere is the only way to miss one.
redis.call('ZADD', key, 50, 'd')
eq(swept(k, 1000), '', 'nothing read while the bound is past the time')
scored_at(k, key, 50)
eq(k.oldest[key], 50, 'a score written lowers the bound')
eq(swept(k, 1000), 'd', 'then it is swept')
scored_at(k, key, 9000)
eq(k.oldest[key], 5000, 'a later score leaves the bound')

-- At most SWEEP a call; past that the bound is unknown and the next call reads again.
redis.call('DEL', key)
for i = 1, SWEEP + 2 do redis.call('ZADD', key, i, 'm' .. string.format('%02d', i)) end
k = {oldest = {}}
swept(k, 1000)
eq(#dropped, SWEEP, 'SWEEP a call')
eq(k.oldest[key], nil, 'more due: no bound')
swept(k, 1000)
eq(#dropped, 2, 'the rest on the next call')
eq(k.oldest[key], math.huge, 'an empty key: nothing below any time')

-- Without kept counts (another Lua state writes the keys) nothing is kept and every call reads.
redis.call('ZADD', key, 10, 'x')
eq(swept(nil, 1000), 'x', 'no kept counts: swept')
redis.call('DEL', key)
