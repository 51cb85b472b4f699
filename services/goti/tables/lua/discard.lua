-- Deletes a table still at the expected seq, with its log, code, timer and lobby listing.
-- KEYS: 1 state, 2 log, 3 requests, 4 code, 5 timers, 6 lobby, 7 lobby listings
-- ARGV: 1 table id, 2 expected seq, 3 lobby channel, 4 lobby message,
--       5 publish command (PUBLISH, or SPUBLISH on a cluster)
-- Returns 'ok', 'stale' or 'missing'.
local seq = redis.call('HGET', KEYS[1], 'seq')
if not seq then return 'missing' end
if tonumber(seq) ~= tonumber(ARGV[2]) then return 'stale' end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
redis.call('ZREM', KEYS[5], ARGV[1])
if redis.call('ZREM', KEYS[6], ARGV[1]) == 1 then
  redis.call('HDEL', KEYS[7], ARGV[1])
  redis.call(ARGV[5], ARGV[3], ARGV[4])
end
return 'ok'
