-- On a Redis Cluster, the step after a pairing's table is written: marks a seeker held for
-- it paired there, with the opponent's rating, records the table as the player's last
-- paired one, and wakes the seek's stream. Done again, it changes nothing.
-- KEYS: 1 seek record, 2 paired table of the player
-- ARGV: 1 table id, 2 opponent id, 3 opponent's rating (as their seek stored it),
--       4 seek kept after pairing (ms), 5 paired table kept (s), 6 the seek's channel,
--       7 publish command (SPUBLISH)
-- Returns 1 when the seek is paired at the table (now or before), 0 when it was not held
-- for it.
local seek = redis.call('HMGET', KEYS[1], 'state', 'table', 'reserved')
if seek[1] == 'paired' and seek[2] == ARGV[1] then return 1 end
if seek[3] ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[1], 'reserved', 'reserved_until', 'reserved_opponent')
redis.call('HSET', KEYS[1], 'state', 'paired', 'table', ARGV[1], 'opponent_rating', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('HSET', KEYS[2], 'table', ARGV[1], 'opponent', ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[5])
redis.call(ARGV[7], ARGV[6], ARGV[1])
return 1
