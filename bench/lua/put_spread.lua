-- PUT of 1 KiB at the current token on a key drawn at random from /k/0 .. /k/<N-1>, every key
-- already fenced at token 1 by bench/tools/fence_fill: admission looks up a spread of keys in
-- the store (most of them outside the gateway's key cache when N is large) and never advances.
-- Script arguments: a run tag (unused, for the same command line as the other scripts), N.
local keys = 1000
local body = string.rep("x", 1024)

function init(args)
  keys = tonumber(args[2] or keys)
  math.randomseed(os.time() + keys)
end

function request()
  return wrk.format("PUT", "/k/" .. math.random(0, keys - 1), {
    ["Fencing-Token"] = "1",
    ["Content-Type"] = "application/octet-stream",
  }, body)
end
