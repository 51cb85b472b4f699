-- On a Redis Cluster: lets a seeker held for a table go back to waiting, if that table holds
-- it (a pairing that did not happen).
-- KEYS: 1 seek record
-- ARGV: 1 table id
-- Returns 1 when let go, 0 when another table (or none) held it.
if redis.call('HGET', KEYS[1], 'reserved') ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[1], 'reserved', 'reserved_until', 'reserved_opponent')
return 1
