-- Counts a finished game against the computer once in the player's streaks.
-- KEYS: 1 player, 2 counted results
-- ARGV: 1 table id, 2 won (1|0), 3 remember seconds
-- Returns 1 when counted, 0 when counted before or there is no such player.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('SADD', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('EXPIRE', KEYS[2], ARGV[3])
if ARGV[2] == '1' then
  local streak = redis.call('HINCRBY', KEYS[1], 'win_streak', 1)
  local best = tonumber(redis.call('HGET', KEYS[1], 'best_streak') or '0')
  if streak > best then redis.call('HSET', KEYS[1], 'best_streak', streak) end
else
  redis.call('HSET', KEYS[1], 'win_streak', 0)
end
return 1
