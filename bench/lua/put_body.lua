-- PUT at the fence's current token (1) on one key with a body of the size given as the second
-- script argument (bytes; the first is the run tag). Built once after init: a static request.
wrk.method = "PUT"
wrk.headers["Fencing-Token"] = "1"
wrk.headers["Content-Type"] = "application/octet-stream"

function init(args)
  wrk.body = string.rep("x", tonumber(args[2]))
end
