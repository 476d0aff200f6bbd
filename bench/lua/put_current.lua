-- PUT of 1 KiB at the fence's current highest token: every connection writes the same key
-- with token 1, so after the first request no write advances the fence (a lock holder writing).
wrk.method = "PUT"
wrk.path = "/put/current"
wrk.body = string.rep("x", 1024)
wrk.headers["Fencing-Token"] = "1"
wrk.headers["Content-Type"] = "application/octet-stream"
