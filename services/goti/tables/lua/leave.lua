-- Takes a seek out of its pool when its stream ends unpaired; its record stays a while, so
-- that the same request id resumes it.
-- KEYS: 1 seek record, 2 pool, 3 pool seekers (on a Redis Cluster the seek record alone: the
--       pool, in another slot, is written next)
-- ARGV: 1 player id, 2 stream token, 3 record kept (ms)
-- Returns 1 when it left, 0 when the seek was paired, gone, another stream's, or held by a
-- pairing between its steps (on a Redis Cluster: it is paired, or let go, in a moment).
local seek = redis.call('HMGET', KEYS[1], 'state', 'stream', 'reserved')
if seek[1] ~= 'waiting' or seek[2] ~= ARGV[2] or seek[3] then return 0 end
take_out('left', ARGV[3])
return 1
