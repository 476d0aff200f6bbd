-- PUT of 1 KiB at the fence's current token (1) with the realistic header block of a real
-- client (realistic_put.http: user agent, accept, authorization, content type, trace context,
-- a dozen fields), one key. The request is built once: wrk sends it as a static request.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local realistic = dofile(dir .. "realistic.lua")
local body = string.rep("x", 1024)

function wrk.format()
  return realistic("/put/headers", wrk.headers["Host"], "1", body)
end
