-- Creates a table at seq 0 with an empty log, its join code, and its lobby and timer entries
-- (new_table.lua comes first).
-- KEYS: 1 state, 2 code, 3 lobby, 4 lobby listings, 5 timers, 6 log, 7 requests
-- ARGV: 1 table id, 2 lobby score ('' = not listed), 3 listing, 4 lobby channel,
--       5 lobby message, 6 timer score ('' = none), 7 expire seconds,
--       8 publish command (PUBLISH, or SPUBLISH on a cluster), 9 .. field/value pairs
-- Returns 'ok', 'exists' or 'code_taken'.
local created = new_table(KEYS[1], KEYS[2], KEYS[6], KEYS[7], KEYS[5], ARGV[1], ARGV[7],
                          ARGV[6], 9)
if created ~= 'ok' then return created end
if ARGV[2] ~= '' then
  redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[3])
  redis.call(ARGV[8], ARGV[4], ARGV[5])
end
return 'ok'
