-- A table's seq and the events its log holds after a seq.
-- KEYS: 1 state, 2 log
-- ARGV: 1 after seq
-- Returns {seq, log_first, events...}, or {-1} when there is no such table.
local state = redis.call('HMGET', KEYS[1], 'seq', 'log_first')
if not state[1] then return {-1} end
local seq = tonumber(state[1])
local first = tonumber(state[2])
local after = tonumber(ARGV[1])
local reply = {seq, first}
if after < seq and after + 1 >= first then
  local events = redis.call('LRANGE', KEYS[2], after + 1 - first, -1)
  for i = 1, #events do reply[#reply + 1] = events[i] end
end
return reply
