-- PUT of 1 KiB that advances ONE hot key on every request: request n carries token n + 1 on
-- /hot/<run>. One wrk thread drives all the connections, so the counter is strictly increasing
-- in send order; with many connections in flight a later token can reach the proxy before an
-- earlier one, and the earlier one is then a stale write by the rules (409). The script counts
-- 409s apart from other non-2xx responses and prints them at the end ("stale_409: N",
-- "other_non_2xx: N"), so the report shows them instead of folding them into the errors.
local body = string.rep("x", 1024)
local headers = { ["Content-Type"] = "application/octet-stream" }
local path
local sent = 0
local threads = {}
stale = 0
other = 0

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  path = "/hot/" .. (args[1] or "run")
end

function request()
  sent = sent + 1
  headers["Fencing-Token"] = tostring(sent)
  return wrk.format("PUT", path, headers, body)
end

function response(status)
  if status == 409 then
    stale = stale + 1
  elseif status >= 300 then
    other = other + 1
  end
end

function done()
  local total_stale, total_other = 0, 0
  for _, thread in ipairs(threads) do
    total_stale = total_stale + thread:get("stale")
    total_other = total_other + thread:get("other")
  end
  io.write(string.format("stale_409: %d\nother_non_2xx: %d\n", total_stale, total_other))
end
