-- PUT of 1 KiB that writes a key never written before on every request: request n writes
-- /fresh/<run>/<n> with token 1, so every request is a key's first write (its fence goes from
-- none to 1: one durable store write each, and on etcd no cached revision to compare against).
-- One wrk thread drives all the connections, so one counter names every key once (see
-- put_advance.lua for why one thread). The first script argument (the run tag) makes the keys
-- of one run distinct from every other run's.
local body = string.rep("x", 1024)
local headers = { ["Fencing-Token"] = "1", ["Content-Type"] = "application/octet-stream" }
local prefix
local sent = 0

function init(args)
  prefix = "/fresh/" .. (args[1] or "run") .. "/"
end

function request()
  local path = prefix .. sent
  sent = sent + 1
  return wrk.format("PUT", path, headers, body)
end
