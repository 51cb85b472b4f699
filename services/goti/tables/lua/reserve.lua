-- On a Redis Cluster, the first step of a pairing (see pool_steps.py): holds a waiting
-- seeker for the table about to be made, unless it left, its stream stopped keeping it
-- alive, or another pairing holds it.
-- KEYS: 1 seek record
-- ARGV: 1 pool, 2 now (ms), 3 table id, 4 held until (ms), 5 opponent id,
--       6 seek kept (ms)
-- Returns {'ok', rating as the seek stored it}, {'gone'}, or {'reserved', table id, until}
-- when another pairing holds it.
local seek = redis.call('HMGET', KEYS[1], 'state', 'pool', 'alive', 'reserved',
                        'reserved_until', 'rating')
if seek[4] then
  if seek[4] == ARGV[3] then return {'ok', seek[6] or ''} end
  return {'reserved', seek[4], seek[5] or '0'}
end
if not (seek[1] == 'waiting' and seek[2] == ARGV[1]) then return {'gone'} end
if (tonumber(seek[3]) or 0) < tonumber(ARGV[2]) then
  -- Its stream's replica stopped keeping it alive.
  redis.call('HSET', KEYS[1], 'state', 'left')
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
  return {'gone'}
end
redis.call('HSET', KEYS[1], 'reserved', ARGV[3], 'reserved_until', ARGV[4],
           'reserved_opponent', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return {'ok', seek[6] or ''}
