-- A small Redis client for nginx's cosockets (RESP2): what the gateway needs to call the view's
-- functions, and no more. lua-resty-redis is not packaged in Debian; this one is the project's own.
--
--   local resp = require "kvr.resp"
--   local conn, err = resp.connect{host = "127.0.0.1", port = 6379, timeout_ms = 50, user = "balancer",
--                                  password = "...", tls = true, server_name = "redis", verify = true}
--   local reply, err = conn:call("FCALL", "kvr_pick", 6, ...)   -- err: "timeout", "closed", or a Redis error
--   conn:release(60000, 32)                                      -- back to the pool (or conn:close())
--
-- Connections are pooled per (host, port, user, tls) by nginx; a new one authenticates (AUTH) and,
-- with tls, shakes hands before its first command, a reused one does neither. Replies are bounded:
-- a bulk string over max_bulk bytes or an array over max_array elements closes the connection with
-- an error instead of buffering it (a view's answers are a few hundred bytes).
local _M = {}

local tcp = ngx.socket.tcp
local concat = table.concat
local tonumber = tonumber
local sub = string.sub
local byte = string.byte

local MAX_BULK = 1024 * 1024
local MAX_ARRAY = 1024
local MAX_DEPTH = 4

local Conn = {}
Conn.__index = Conn

-- The pool a connection goes back to: one per server and identity, so a connection authenticated as
-- one user is never handed to a caller configured as another.
local function pool_name(o)
  return concat({"kvr", o.host, tostring(o.port), o.user or "", o.tls and "tls" or "plain"}, ":")
end

--- Opens (or takes from the pool) a connection; returns conn, or nil and an error.
function _M.connect(o)
  local sock, err = tcp()
  if not sock then return nil, err end
  local timeout = o.timeout_ms or 50
  sock:settimeouts(o.connect_timeout_ms or timeout, timeout, timeout)
  local ok
  ok, err = sock:connect(o.host, o.port, {pool = pool_name(o), pool_size = o.pool_size or 32})
  if not ok then return nil, "connect: " .. tostring(err) end
  local self = setmetatable({sock = sock, max_bulk = o.max_bulk or MAX_BULK, max_array = o.max_array or MAX_ARRAY}, Conn)
  local reused = sock:getreusedtimes()
  if reused == 0 then
    if o.tls then
      -- server_name: the name the certificate must carry (and SNI); none: the chain is checked, not the name.
      -- Called protected: Debian's lua-resty-core asserts on some failed verifications (an untrusted EC
      -- chain) instead of returning the error, which would fail the request; here it is one more "tls:".
      local called, done, herr = pcall(sock.sslhandshake, sock, nil, o.server_name, o.verify ~= false)
      if not called or not done then
        sock:close()
        return nil, "tls: " .. tostring(called and herr or done)
      end
    end
    if o.password and o.password ~= "" then
      local reply, aerr
      if o.user and o.user ~= "" then
        reply, aerr = self:call("AUTH", o.user, o.password)
      else
        reply, aerr = self:call("AUTH", o.password)
      end
      if not reply then
        sock:close()
        return nil, "auth: " .. tostring(aerr)
      end
    end
  end
  return self
end

local function encode(args)
  local n = #args
  local out = {"*", n, "\r\n"}
  for i = 1, n do
    local a = tostring(args[i])
    out[#out + 1] = "$"
    out[#out + 1] = #a
    out[#out + 1] = "\r\n"
    out[#out + 1] = a
    out[#out + 1] = "\r\n"
  end
  return concat(out)
end
_M.encode = encode -- (for tests)

-- Reads one reply. Returns value, or nil and an error; a Redis error reply is (nil, message, true).
function Conn:read(depth)
  local sock = self.sock
  local line, err = sock:receive("*l")
  if not line then return nil, err end
  local kind, rest = byte(line, 1), sub(line, 2)
  if kind == 43 then -- '+'
    return rest
  elseif kind == 45 then -- '-'
    return nil, rest, true
  elseif kind == 58 then -- ':'
    return tonumber(rest)
  elseif kind == 36 then -- '$'
    local size = tonumber(rest)
    if not size then return nil, "bad bulk length: " .. rest end
    if size < 0 then return ngx.null end
    if size > self.max_bulk then return nil, "bulk string of " .. size .. " bytes over " .. self.max_bulk end
    local data
    data, err = sock:receive(size + 2)
    if not data then return nil, err end
    return sub(data, 1, size)
  elseif kind == 42 then -- '*'
    local count = tonumber(rest)
    if not count then return nil, "bad array length: " .. rest end
    if count < 0 then return ngx.null end
    if count > self.max_array then return nil, "array of " .. count .. " elements over " .. self.max_array end
    depth = (depth or 0) + 1
    if depth > MAX_DEPTH then return nil, "arrays nested over " .. MAX_DEPTH .. " deep" end
    local list = {}
    for i = 1, count do
      local v, e, redis_error = self:read(depth)
      if v == nil then
        if redis_error then
          list[i] = {err = e} -- an error inside an array is a value there
        else
          return nil, e
        end
      else
        list[i] = v
      end
    end
    return list
  end
  return nil, "unknown reply type: " .. sub(line, 1, 16)
end

--- Sends one command and reads its reply. On a timeout or a broken reply the connection is closed
--- (its next reply would belong to this command); a Redis error keeps it usable.
function Conn:call(...)
  local sock = self.sock
  local ok, err = sock:send(encode({...}))
  if not ok then
    sock:close()
    self.broken = true
    return nil, err
  end
  local v, e, redis_error = self:read(0)
  if v == nil and not redis_error then
    sock:close()
    self.broken = true
  end
  return v, e, redis_error
end

--- Back to the pool (a broken connection was closed already).
function Conn:release(idle_ms, pool_size)
  if self.broken then return end
  local ok = self.sock:setkeepalive(idle_ms or 60000, pool_size or 32)
  if not ok then self.sock:close() end
end

function Conn:close()
  if not self.broken then self.sock:close() end
  self.broken = true
end

return _M
