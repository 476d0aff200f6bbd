-- The raw etcd peer of a fenced advance: one transaction per request, POST /v3/kv/txn to etcd's
-- JSON gateway over keep-alive, with what fencegate's store sends for one advance of a key it
-- has not seen (a compare create_revision = 0 on the key, a put of a 30-byte fence value on
-- success, a range of the key on failure). Request n writes key /bench-raw/<run>/<n>, so every
-- compare holds and every transaction commits one put. Run it on one connection (-c1 -t1).
-- Transactions whose compare failed are counted and printed at the end ("txn_failed: N"):
-- etcd answers them 200.
local headers = { ["Content-Type"] = "application/json" }
local prefix
local sent = 0
local threads = {}
failed = 0

local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

local function base64(text)
  local out = {}
  for i = 1, #text, 3 do
    local a, b, c = text:byte(i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local chars = 2 + (b and 1 or 0) + (c and 1 or 0)
    for j = 1, 4 do
      if j <= chars then
        local index = math.floor(n / 2 ^ (6 * (4 - j))) % 64
        out[#out + 1] = alphabet:sub(index + 1, index + 1)
      else
        out[#out + 1] = "="
      end
    end
  end
  return table.concat(out)
end

-- EncodeEtcdFence's layout: 16 hex digits of the token, ':', the advance time in ms.
local value = base64("0000000000000001:1765000000000")

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  prefix = "/bench-raw/" .. (args[1] or "run") .. "/"
end

function request()
  local key = base64(prefix .. sent)
  sent = sent + 1
  local body = '{"compare":[{"key":"' .. key .. '","target":"CREATE","result":"EQUAL",'
    .. '"create_revision":"0"}],"success":[{"request_put":{"key":"' .. key .. '","value":"'
    .. value .. '"}}],"failure":[{"request_range":{"key":"' .. key .. '"}}]}'
  return wrk.format("POST", nil, headers, body)
end

function response(status, _, body)
  if status == 200 and not body:find('"succeeded":true', 1, true) then
    failed = failed + 1
  end
end

function done()
  local total = 0
  for _, thread in ipairs(threads) do
    total = total + thread:get("failed")
  end
  io.write(string.format("txn_failed: %d\n", total))
end
