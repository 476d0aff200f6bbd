-- PUT of 1 KiB at the current token on 1,000 keys (/keys/0 .. /keys/999) in turn, the same
-- short header block as put_current.lua: the key lookup spread over many fences instead of
-- one hot one. Keys carry no run tag, so only the first write to each key (in the first run
-- against a proxy) advances its fence from none to 1; every later write is at the current token.
-- Script arguments: a run tag (unused, for the same command line as the other scripts), keys.
local keys = 1000
local body = string.rep("x", 1024)
local headers = { ["Fencing-Token"] = "1", ["Content-Type"] = "application/octet-stream" }
local sent = 0

function init(args)
  keys = tonumber(args[2] or keys)
end

function request()
  local key = sent % keys
  sent = sent + 1
  return wrk.format("PUT", "/keys/" .. key, headers, body)
end
