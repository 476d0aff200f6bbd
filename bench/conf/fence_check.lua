-- The fence check a user would add to nginx instead of running fencegate (the bench's
-- "nginx_lua" peer, conf/proxy-nginx-lua.conf): the highest token per key in a lua_shared_dict,
-- checked before a write is proxied, with fencegate's rules (lockstore/tokens/token.h):
-- a write (PUT, POST, DELETE, PATCH) without Fencing-Token -> 428; a value that is not
-- 1*DIGIT (leading zeros allowed) of at most 2^63-1 -> 400; below the key's highest -> 409;
-- at or above it -> admitted, the highest raised to it. What it does not do: the dict is in
-- memory only (a restart forgets every fence), a stale write already in flight to the backend
-- is not held back (no barrier), nothing is audited, and a repeated Fencing-Token field is not
-- refused (nginx 1.22's $http_ variable gives the first one).
local _M = {}

local fences = ngx.shared.fences
local WRITES = { PUT = true, POST = true, DELETE = true, PATCH = true }
local MAX_TOKEN = "9223372036854775807" -- 2^63-1, fencegate's kMaxToken
local LOCK_TTL_S = 1 -- a worker that dies holding a key's lock frees it after this

local function refuse(status, text)
  ngx.status = status
  ngx.header["Content-Type"] = "text/plain"
  ngx.say(text)
  return ngx.exit(ngx.HTTP_OK)
end

-- The token as a decimal string without leading zeros ("0" for zero), or nil when malformed.
-- Tokens stay strings: a Lua number is a double, exact only up to 2^53.
local function canonical(value)
  if not value:find("^%d+$") then
    return nil
  end
  local digits = value:match("^0*(%d+)$") -- keeps the last zero of "000"
  if #digits > #MAX_TOKEN or (#digits == #MAX_TOKEN and digits > MAX_TOKEN) then
    return nil
  end
  return digits
end

-- a < b for canonical tokens: the shorter is smaller, equal lengths compare as text.
local function below(a, b)
  if #a ~= #b then
    return #a < #b
  end
  return a < b
end

-- Raises the key's highest token to `token` unless it is already above it. The shared dict
-- has no compare-and-set, so the read-compare-write runs under a per-key lock (an `add` of a
-- lock entry, which only one worker can win); with the bench's single worker it never waits.
-- Returns nil when admitted, else the status to refuse with.
local function advance(key, token)
  local lock = "lock:" .. key
  while true do
    local locked, err = fences:safe_add(lock, true, LOCK_TTL_S)
    if locked then
      break
    end
    if err ~= "exists" then
      return ngx.HTTP_SERVICE_UNAVAILABLE
    end
    ngx.sleep(0.001)
  end
  local status
  local highest = fences:get(key)
  if highest and below(token, highest) then
    status = ngx.HTTP_CONFLICT
  elseif highest ~= token then
    -- safe_set never evicts another key's fence to make room (that would forget a fence).
    local ok = fences:safe_set(key, token)
    if not ok then
      status = ngx.HTTP_SERVICE_UNAVAILABLE
    end
  end
  fences:delete(lock)
  return status
end

function _M.access()
  if not WRITES[ngx.req.get_method()] then
    return
  end
  local value = ngx.var.http_fencing_token
  if not value then
    return refuse(428, "Fencing-Token required")
  end
  local token = canonical(value)
  if not token then
    return refuse(ngx.HTTP_BAD_REQUEST, "malformed Fencing-Token")
  end
  local key = ngx.var.uri
  local highest = fences:get(key)
  if highest == token then
    return -- the common case, a lock holder writing at its token: no lock, no write
  end
  if highest and below(token, highest) then
    return refuse(ngx.HTTP_CONFLICT, "stale Fencing-Token")
  end
  local status = advance(key, token)
  if status == ngx.HTTP_CONFLICT then
    return refuse(status, "stale Fencing-Token")
  elseif status then
    return refuse(status, "fence store full")
  end
end

return _M
