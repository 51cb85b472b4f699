-- Counts a rated game once in both players' ratings.
-- KEYS: 1 white player, 2 black player, 3 white's rated games, 4 black's rated games,
--       5 the variant's leaderboard, 6 timers
-- ARGV: 1 table id, 2 rating field, 3 white's old value ('' = none), 4 black's old value,
--       5 white's new value, 6 black's new value, 7 white's leaderboard score ('' = not
--       listed), 8 black's, 9 seconds to remember the game, 10 the timer entry's lease end
--       (ms; '' = none), 11 white's player id, 12 black's, 13 now (ms)
-- Returns 1 when counted, 0 when counted before, -1 when a rating moved since it was read
-- (read again and retry).
local function release_timer()
  if ARGV[10] == '' then return end
  local score = redis.call('ZSCORE', KEYS[6], ARGV[1])
  if score and tonumber(score) == tonumber(ARGV[10]) then redis.call('ZREM', KEYS[6], ARGV[1]) end
end

local players = {{KEYS[1], KEYS[3], ARGV[3], ARGV[5], ARGV[7], ARGV[11]},
                 {KEYS[2], KEYS[4], ARGV[4], ARGV[6], ARGV[8], ARGV[12]}}
for _, player in ipairs(players) do
  if redis.call('ZSCORE', player[2], ARGV[1]) then
    -- Keep the mark at least as long as the finished table that could ask again.
    redis.call('ZADD', player[2], ARGV[13], ARGV[1])
    redis.call('EXPIRE', player[2], ARGV[9])
    release_timer()
    return 0
  end
end
for _, player in ipairs(players) do
  if redis.call('EXISTS', player[1]) == 1 then
    local old = redis.call('HGET', player[1], ARGV[2]) or ''
    if old ~= player[3] then return -1 end
  end
end
for _, player in ipairs(players) do
  -- A player removed meanwhile is not brought back as a hash without a token.
  if redis.call('EXISTS', player[1]) == 1 then
    redis.call('HSET', player[1], ARGV[2], player[4])
    -- Games whose tables are gone cannot ask again: the set holds a window of games only.
    redis.call('ZREMRANGEBYSCORE', player[2], '-inf', tonumber(ARGV[13]) - 1000 * tonumber(ARGV[9]))
    redis.call('ZADD', player[2], ARGV[13], ARGV[1])
    redis.call('EXPIRE', player[2], ARGV[9])
    if player[5] == '' then
      redis.call('ZREM', KEYS[5], player[6])
    else
      redis.call('ZADD', KEYS[5], player[5], player[6])
    end
  end
end
release_timer()
return 1
