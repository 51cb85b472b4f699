-- On a Redis Cluster, where a game's two players are in different slots: counts a rated
-- game once in one player's rating (rate_game.lua counts both at once on one Redis).
-- KEYS: 1 player, 2 the player's rated games
-- ARGV: 1 table id, 2 rating field, 3 old value ('' = none), 4 new value,
--       5 seconds to remember the game, 6 now (ms)
-- Returns 1 when counted, 0 when counted before or there is no such player, -1 when the
-- rating moved since it was read (read again and retry).
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  -- Keep the mark at least as long as the finished table that could ask again.
  redis.call('ZADD', KEYS[2], ARGV[6], ARGV[1])
  redis.call('EXPIRE', KEYS[2], ARGV[5])
  return 0
end
-- A player removed meanwhile is not brought back as a hash without a token.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if (redis.call('HGET', KEYS[1], ARGV[2]) or '') ~= ARGV[3] then return -1 end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', tonumber(ARGV[6]) - 1000 * tonumber(ARGV[5]))
redis.call('ZADD', KEYS[2], ARGV[6], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[5])
return 1
