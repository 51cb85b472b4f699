-- Creates a table at seq 0 with an empty log, its join code, and its lobby and timer entries.
-- KEYS: 1 state, 2 code, 3 lobby, 4 lobby listings, 5 timers, 6 log, 7 requests
-- ARGV: 1 table id, 2 lobby score ('' = not listed), 3 listing, 4 lobby channel,
--       5 lobby message, 6 timer score ('' = none), 7 expire seconds,
--       8 .. field/value pairs
-- Returns 'ok', 'exists' or 'code_taken'.
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
if not redis.call('SET', KEYS[2], ARGV[1], 'NX', 'EX', ARGV[7]) then return 'code_taken' end
local fields = {'seq', 0, 'log_first', 1}
for i = 8, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('DEL', KEYS[6], KEYS[7])
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('EXPIRE', KEYS[1], ARGV[7])
if ARGV[2] ~= '' then
  redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[3])
  redis.call('PUBLISH', ARGV[4], ARGV[5])
end
if ARGV[6] ~= '' then redis.call('ZADD', KEYS[5], ARGV[6], ARGV[1]) end
return 'ok'
