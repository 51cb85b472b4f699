-- Writes fields of an existing player.
-- KEYS: 1 player
-- ARGV: 1 .. field/value pairs
-- Returns 1 when written, 0 if there is no such player.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
