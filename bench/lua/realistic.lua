-- The realistic header block (realistic_put.http, shared with the driver's fixed-count client):
-- returns a function that builds the whole PUT request, fields in the file's order. wrk.format
-- would emit the fields in Lua's table order, so the scripts that send this block replace it.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local file = assert(io.open(dir .. "realistic_put.http", "r"))
local template = file:read("*a"):gsub("\n$", ""):gsub("\n", "\r\n")
file:close()

return function(path, host, token, body)
  local values = { path = path, host = host, token = token, length = #body }
  return (template:gsub("{(%a+)}", function(name) return tostring(values[name]) end))
    .. "\r\n\r\n" .. body
end
