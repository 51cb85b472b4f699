-- Commits one change to a table if it is still at the expected seq, all or nothing
-- (remembered_request.lua comes first).
-- KEYS: 1 state, 2 log, 3 requests, 4 timers, 5 lobby, 6 lobby listings,
--       7 code (the state key again when the table has none)
-- ARGV: 1 table id, 2 expected seq, 3 request key ('' = none), 4 event count n,
--       5 table channel, 6 timer op (keep|set|clear), 7 timer score,
--       8 lobby op (keep|list|unlist), 9 lobby score, 10 listing, 11 lobby channel,
--       12 lobby message, 13 table log events (how many the log keeps), 14 expire seconds,
--       15 requests remembered, 16 publish command (PUBLISH, or SPUBLISH on a cluster),
--       17 .. 16+n the events to log, 17+n .. 16+2n the events to publish, then field/value
--       pairs
-- Returns {'ok', first seq, last seq}, {'duplicate', first seq, last seq} for a command seen
-- before, {'stale', seq, seq}, {'reused', seq, seq} or {'missing', -1, -1}.
local seq = redis.call('HGET', KEYS[1], 'seq')
if not seq then return {'missing', -1, -1} end
seq = tonumber(seq)
local request = ARGV[3]
if request ~= '' then
  local found, first, last = remembered_request(KEYS[3], request)
  if found == 'reused' then return {found, seq, seq} end
  if found == 'duplicate' then return {found, first, last} end
end
if seq ~= tonumber(ARGV[2]) then return {'stale', seq, seq} end
local count = tonumber(ARGV[4])
local new_seq = seq + count
local fields = {'seq', new_seq}
for i = 17 + 2 * count, #ARGV do fields[#fields + 1] = ARGV[i] end
local length = 0
for i = 17, 16 + count do
  length = redis.call('RPUSH', KEYS[2], ARGV[i])
  redis.call(ARGV[16], ARGV[5], ARGV[i + count])
end
local table_log_events = tonumber(ARGV[13])
local log_first = nil
if length > table_log_events then
  redis.call('LTRIM', KEYS[2], length - table_log_events, -1)
  log_first = new_seq - table_log_events + 1
  fields[#fields + 1] = 'log_first'
  fields[#fields + 1] = log_first
end
redis.call('HSET', KEYS[1], unpack(fields))
if request ~= '' then
  redis.call('RPUSH', KEYS[3], request .. (seq + 1) .. ':' .. new_seq)
  redis.call('LTRIM', KEYS[3], -tonumber(ARGV[15]), -1)
end
if log_first then
  -- A command whose first event left the log is forgotten, oldest first: its retry is then
  -- refused as stale instead of answered without its events.
  local oldest = redis.call('LINDEX', KEYS[3], 0)
  while oldest and tonumber(string.match(string.sub(oldest, 13), '^(%d+):')) < log_first do
    redis.call('LPOP', KEYS[3])
    oldest = redis.call('LINDEX', KEYS[3], 0)
  end
end
if ARGV[6] == 'set' then
  redis.call('ZADD', KEYS[4], ARGV[7], ARGV[1])
elseif ARGV[6] == 'clear' then
  redis.call('ZREM', KEYS[4], ARGV[1])
end
if ARGV[8] == 'list' then
  redis.call('ZADD', KEYS[5], ARGV[9], ARGV[1])
  redis.call('HSET', KEYS[6], ARGV[1], ARGV[10])
  redis.call(ARGV[16], ARGV[11], ARGV[12])
elseif ARGV[8] == 'unlist' then
  if redis.call('ZREM', KEYS[5], ARGV[1]) == 1 then
    redis.call('HDEL', KEYS[6], ARGV[1])
    redis.call(ARGV[16], ARGV[11], ARGV[12])
  end
end
local expire = tonumber(ARGV[14])
if expire > 0 then
  for i = 1, 3 do redis.call('EXPIRE', KEYS[i], expire) end
  if KEYS[7] ~= KEYS[1] then redis.call('EXPIRE', KEYS[7], expire) end
end
return {'ok', seq + 1, new_seq}
