-- A waiting seek's stream looks in: its record is kept alive while the stream is its own.
-- KEYS: 1 seek record, 2 pool (on a Redis Cluster the seek record alone: the pool is in
--       another slot)
-- ARGV: 1 stream token, 2 record kept (ms), 3 alive until (ms)
-- Returns {state, whether the stream is the seek's own (1/0), table id, players in the pool
-- (-1 when not asked), the opponent's rating once paired, the table a pairing holds the seek
-- for between its steps (on a Redis Cluster) and until when (ms)}.
local seek = redis.call('HMGET', KEYS[1], 'state', 'stream', 'table', 'opponent_rating',
                        'reserved', 'reserved_until')
local own = 0
if seek[2] == ARGV[1] then own = 1 end
if seek[1] == 'waiting' and own == 1 then
  redis.call('HSET', KEYS[1], 'alive', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
local size = -1
if #KEYS > 1 then size = redis.call('ZCARD', KEYS[2]) end
return {seek[1] or '', own, seek[3] or '', size, seek[4] or '', seek[5] or '', seek[6] or '0'}
