-- Takes a player's seek out of its pool for good (CancelSeek), whichever stream holds it:
-- the same request id cannot seek again, and no pairing can take it any more.
-- KEYS: 1 seek record, 2 pool, 3 pool seekers (on a Redis Cluster the seek record alone: the
--       pool, in another slot, is written next)
-- ARGV: 1 player id, 2 request id, 3 the pool the caller read in the record, 4 record kept
--       (ms)
-- Returns {'cancelled'} (taken out now, or before), {'paired', table id, opponent's rating},
-- {'held', until (ms)} while a pairing holds it between its steps (on a Redis Cluster: ask
-- again once it is paired or let go), {'moved'} when the record's pool is no longer the one
-- read (read it again), or {'none'} when the player's seek is not this request id's.
local seek = redis.call('HMGET', KEYS[1], 'request', 'state', 'pool', 'table',
                        'opponent_rating', 'reserved', 'reserved_until')
if seek[1] ~= ARGV[2] then return {'none'} end
if seek[2] == 'paired' then return {'paired', seek[4] or '', seek[5] or ''} end
if seek[2] == 'cancelled' then return {'cancelled'} end
if seek[6] then return {'held', seek[7] or '0'} end
if seek[3] ~= ARGV[3] then return {'moved'} end
take_out('cancelled', ARGV[4])
return {'cancelled'}
