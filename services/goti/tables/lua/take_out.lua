-- Shared by leave.lua and cancel_seek.lua: the stores put this text ahead of each when they
-- load them, since one Redis script cannot call another.
--
-- take_out(state, kept_ms): takes the seek out of its pool and marks its record `state`,
-- kept `kept_ms` more. Uses the caller's KEYS (1 seek record, 2 pool, 3 pool seekers; on a
-- Redis Cluster the record alone, the caller taking it out of the pool's slot next) and
-- ARGV[1], the player id.
local function take_out(state, kept_ms)
  if #KEYS > 1 then
    redis.call('ZREM', KEYS[2], ARGV[1])
    redis.call('HDEL', KEYS[3], ARGV[1])
  end
  redis.call('HSET', KEYS[1], 'state', state)
  redis.call('PEXPIRE', KEYS[1], kept_ms)
end
