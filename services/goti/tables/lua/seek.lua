-- Enters a player's seek in a pool, or resumes it (same request id, same pool) with its wait.
-- KEYS: 1 seek record, 2 pool, 3 pool seekers (on a Redis Cluster the seek record alone: the
--       pool, in another slot, is written next)
-- ARGV: 1 player id, 2 request id, 3 pool, 4 rating (the score), 5 rating (stored),
--       6 now (ms), 7 stream token, 8 record kept (ms), 9 alive until (ms), 10 last opponent,
--       11 the seat the player takes when paired (a Seat message)
-- Returns {'entered' | 'resumed', entered ms}, {'paired'} when this request was paired
-- already, {'cancelled'} when CancelSeek took this request's seek out, or {'in_progress'}
-- when another seek of the player's is waiting.
local seek = redis.call('HMGET', KEYS[1], 'request', 'state', 'pool', 'entered', 'reserved',
                        'reserved_until', 'reserved_opponent')
local request, state, pool, entered = seek[1], seek[2], seek[3], seek[4]
if state == 'paired' and request == ARGV[2] then return {'paired'} end
if state == 'cancelled' and request == ARGV[2] then return {'cancelled'} end
if state == 'waiting' and (request ~= ARGV[2] or pool ~= ARGV[3]) then return {'in_progress'} end
local outcome = 'resumed'
if not (request == ARGV[2] and pool == ARGV[3] and (state == 'waiting' or state == 'left')) then
  outcome = 'entered'
  entered = ARGV[6]
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'request', ARGV[2], 'state', 'waiting', 'pool', ARGV[3],
  'entered', entered, 'stream', ARGV[7], 'rating', ARGV[5], 'alive', ARGV[9])
if outcome == 'resumed' and seek[5] then
  -- A pairing holds this seek between its steps (on a Redis Cluster): resumed, it stays held.
  redis.call('HSET', KEYS[1], 'reserved', seek[5], 'reserved_until', seek[6],
             'reserved_opponent', seek[7])
end
redis.call('PEXPIRE', KEYS[1], ARGV[8])
if #KEYS > 1 then
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
  redis.call('HSET', KEYS[3], ARGV[1], entered .. ' ' .. ARGV[10] .. ' ' .. ARGV[11])
end
return {outcome, entered}
