-- PUT of 1 KiB that advances the fence on every request: each wrk thread drives exactly one
-- connection (run with -t equal to -c) and writes its own key with tokens 1, 2, 3, ..., so
-- tokens only grow per key and no write is ever stale. The first script argument makes the
-- keys of one run distinct from every other run's.
local next_thread_id = 1

function setup(thread)
  thread:set("thread_id", next_thread_id)
  next_thread_id = next_thread_id + 1
end

local path
local body = string.rep("x", 1024)
local token = 0

function init(args)
  path = "/adv/" .. (args[1] or "run") .. "/" .. thread_id
end

function request()
  token = token + 1
  return wrk.format("PUT", path, {
    ["Fencing-Token"] = tostring(token),
    ["Content-Type"] = "application/octet-stream",
  }, body)
end
