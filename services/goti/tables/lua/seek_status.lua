-- A waiting seek's stream looks in: its record is kept alive while the stream is its own.
-- KEYS: 1 seek record, 2 pool
-- ARGV: 1 stream token, 2 record kept (ms), 3 alive until (ms)
-- Returns {state, whether the stream is the seek's own (1/0), table id, players in the pool,
-- the opponent's rating once paired}.
local seek = redis.call('HMGET', KEYS[1], 'state', 'stream', 'table', 'opponent_rating')
local own = 0
if seek[2] == ARGV[1] then own = 1 end
if seek[1] == 'waiting' and own == 1 then
  redis.call('HSET', KEYS[1], 'alive', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return {seek[1] or '', own, seek[3] or '', redis.call('ZCARD', KEYS[2]), seek[4] or ''}
