-- PUT of 1 KiB that advances a fence on every request. Request n (counted from 0) writes key
-- n mod K with token n div K + F, so every request raises its key's highest token by one
-- (K = 4096, or the second script argument: 1 advances one key on every request; F = 1, or the
-- third: a driver that reuses a run tag, whose keys already hold tokens, starts above them).
-- One wrk thread drives all the connections: a thread per connection (the obvious way to keep a
-- counter per connection) costs wrk twice the CPU per request, and wrk shares the load CPU with
-- the backend, so it would cap every proxy below what it can do. A key comes round again only
-- 4096 requests later, long after its previous write was answered; a write that overtook
-- another would show as a non-2xx response in the report (with K = 1 use it on one connection
-- only: put_hot.lua is the many-connection version). The first script argument makes the keys
-- of one run distinct from every other run's.
local keys = 4096
local body = string.rep("x", 1024)
local headers = { ["Content-Type"] = "application/octet-stream" }
local first = 1
local prefix
local sent = 0

function init(args)
  prefix = "/adv/" .. (args[1] or "run") .. "/"
  keys = tonumber(args[2] or keys)
  first = tonumber(args[3] or first)
end

function request()
  local key = sent % keys
  headers["Fencing-Token"] = tostring(math.floor(sent / keys) + first)
  sent = sent + 1
  return wrk.format("PUT", prefix .. key, headers, body)
end
