-- Pairs two seekers of a pool at a new table, or does nothing at all: both must still be
-- waiting there, alive. Each leaves the pool, the table is written (seq 0, an empty log, its
-- code and its turn timer, by new_table.lua, which comes first), both seeks are marked
-- paired with it, and both are woken.
-- KEYS: 1 pool, 2 pool seekers, 3 seek A, 4 seek B, 5 table state, 6 table code, 7 timers,
--       8 table log, 9 table requests, 10 paired table of A, 11 paired table of B
-- ARGV: 1 id of A, 2 id of B, 3 pool, 4 now (ms), 5 seek kept after pairing (ms), 6 table id,
--       7 table expiry (s), 8 timer score ('' = none), 9 paired table kept (s),
--       10 channel of A, 11 channel of B, 12 .. table field/value pairs
-- Returns 'ok', 'gone' (a seeker is no longer waiting here: taken out of the pool),
-- 'exists' or 'code_taken'.
local function waiting(key, id)
  local seek = redis.call('HMGET', key, 'state', 'pool', 'alive')
  local here = seek[1] == 'waiting' and seek[2] == ARGV[3]
  if here and (tonumber(seek[3]) or 0) >= tonumber(ARGV[4]) then return true end
  -- Left, paired elsewhere, gone, or its stream's replica stopped keeping it alive.
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  if here then
    redis.call('HSET', key, 'state', 'left')
    redis.call('PEXPIRE', key, ARGV[5])
  end
  return false
end
local a_waiting = waiting(KEYS[3], ARGV[1])
local b_waiting = waiting(KEYS[4], ARGV[2])
if not (a_waiting and b_waiting) then return 'gone' end
local created = new_table(KEYS[5], KEYS[6], KEYS[8], KEYS[9], KEYS[7], ARGV[6], ARGV[7],
                          ARGV[8], 12)
if created ~= 'ok' then return created end
redis.call('ZREM', KEYS[1], ARGV[1], ARGV[2])
redis.call('HDEL', KEYS[2], ARGV[1], ARGV[2])
local a_rating = redis.call('HGET', KEYS[3], 'rating')
local b_rating = redis.call('HGET', KEYS[4], 'rating')
redis.call('HSET', KEYS[3], 'state', 'paired', 'table', ARGV[6], 'opponent_rating', b_rating)
redis.call('HSET', KEYS[4], 'state', 'paired', 'table', ARGV[6], 'opponent_rating', a_rating)
redis.call('PEXPIRE', KEYS[3], ARGV[5])
redis.call('PEXPIRE', KEYS[4], ARGV[5])
redis.call('HSET', KEYS[10], 'table', ARGV[6], 'opponent', ARGV[2])
redis.call('HSET', KEYS[11], 'table', ARGV[6], 'opponent', ARGV[1])
redis.call('EXPIRE', KEYS[10], ARGV[9])
redis.call('EXPIRE', KEYS[11], ARGV[9])
redis.call('PUBLISH', ARGV[10], ARGV[6])
redis.call('PUBLISH', ARGV[11], ARGV[6])
return 'ok'
