-- Drops (or reschedules) a claimed timer entry nobody has moved since.
-- KEYS: 1 timers
-- ARGV: 1 table id, 2 lease end (ms), 3 new due time (ms; '' = drop)
-- Returns 1 when the entry was dropped or moved, else 0.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then
  if ARGV[3] == '' then return redis.call('ZREM', KEYS[1], ARGV[1]) end
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  return 1
end
return 0
