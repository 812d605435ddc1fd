-- The canonical block hash (docs/canonical-block-hash.md, v1) in LuaJIT, through the FFI and
-- Debian's libxxhash0 (XXH64, seed 0):
--
--   root   = XXH64("kvr-block-v1" 0x00 model 0x00 lora)
--   hash_k = XXH64(le64(hash_{k-1} or root) || le32(t[kC]) .. le32(t[kC + C - 1]))
--
-- packed(model, lora, tokens, C, max_blocks) gives the prompt's hashes as one string of 16 lowercase
-- hex digits per full chunk, one after the other: the argument kvr_pick takes.
local ffi = require "ffi"
local bit = require "bit"

ffi.cdef [[
typedef unsigned long long XXH64_hash_t;
XXH64_hash_t XXH64(const void* input, size_t length, XXH64_hash_t seed);
]]

local _M = {}

local function load_xxhash()
  local names = {"xxhash", "libxxhash.so.0"}
  local errors = {}
  for _, name in ipairs(names) do
    local ok, lib = pcall(ffi.load, name)
    if ok then return lib end
    errors[#errors + 1] = tostring(lib)
  end
  error("kvr.blockhash: libxxhash not found (Debian: apt-get install libxxhash0): " .. table.concat(errors, "; "))
end

local xxh = load_xxhash()
assert(ffi.abi("le"), "kvr.blockhash: the hash is defined on little-endian words; this build writes them natively")

local tohex = bit.tohex
local floor = math.floor

--- XXH64 of a Lua string, as a uint64 cdata.
function _M.xxh64(s)
  return xxh.XXH64(s, #s, 0)
end

--- The hash as 16 lowercase hex digits.
function _M.hex(h)
  return tohex(h, 16)
end

function _M.root(model, lora)
  return xxh.XXH64("kvr-block-v1\0" .. model .. "\0" .. (lora or ""), #model + #(lora or "") + 14, 0)
end

local buffers = {}

local function token_id(t)
  return type(t) == "number" and t >= 0 and t < 4294967296 and t == floor(t)
end

local function not_a_token(at, t)
  return "token " .. at .. " is not a token id (a whole number in [0, 2^32)): " .. tostring(t)
end

--- The prompt's canonical hashes, packed: 16 hex digits per full chunk of `chunk` tokens, at most
--- max_blocks of them (nil, error when any token id, hashed or not, is not a whole number in [0, 2^32)).
function _M.packed(model, lora, tokens, chunk, max_blocks)
  local n = floor(#tokens / chunk)
  if max_blocks and n > max_blocks then n = max_blocks end
  local buf = buffers[chunk]
  if not buf then
    buf = ffi.new("uint8_t[?]", 8 + 4 * chunk)
    buffers[chunk] = buf
  end
  local parent_slot = ffi.cast("uint64_t*", buf)
  local token_slots = ffi.cast("uint32_t*", buf + 8)
  local parent = _M.root(model, lora)
  local out = {}
  for k = 0, n - 1 do
    parent_slot[0] = parent
    local base = k * chunk
    for i = 0, chunk - 1 do
      local t = tokens[base + i + 1]
      if not token_id(t) then return nil, not_a_token(base + i, t) end
      token_slots[i] = t
    end
    parent = xxh.XXH64(buf, 8 + 4 * chunk, 0)
    out[k + 1] = tohex(parent, 16)
  end
  -- The tokens no hash covers (the partial chunk, those past max_blocks) are checked too: a prompt
  -- the engine will refuse is not placed (nor reserved) as if it were one.
  for i = n * chunk + 1, #tokens do
    if not token_id(tokens[i]) then return nil, not_a_token(i - 1, tokens[i]) end
  end
  return table.concat(out), n
end

return _M
