-- Stores a new player.
-- KEYS: 1 player
-- ARGV: 1 seconds to keep it (0: forever), 2 .. field/value pairs
-- Returns 1 when written, 0 if the id is taken.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
if ARGV[1] ~= '0' then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return 1
