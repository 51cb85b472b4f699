-- Shared by create.lua and pair.lua: the stores put this text ahead of each when they load
-- them, since one Redis script cannot call another.
--
-- new_table(state, code, log, requests, timers, table_id, expire, timer_score, first_field):
-- writes a new table at seq 0 with an empty log, its join code and its timer entry, or
-- nothing at all.
--   state, code, log, requests: the table's keys; timers: the timers' sorted set.
--   table_id: the new table's id; expire: seconds the table and its code are kept.
--   timer_score: when its timer entry falls due (ms; '' = no entry).
--   first_field: where in ARGV the table's field/value pairs start (they run to the end).
-- Returns 'ok', 'exists' (the table id is taken) or 'code_taken'; on either refusal
-- nothing was written.
local function new_table(state, code, log, requests, timers, table_id, expire, timer_score,
                         first_field)
  if redis.call('EXISTS', state) == 1 then return 'exists' end
  if not redis.call('SET', code, table_id, 'NX', 'EX', expire) then return 'code_taken' end
  local fields = {'seq', 0, 'log_first', 1}
  for i = first_field, #ARGV do fields[#fields + 1] = ARGV[i] end
  redis.call('DEL', log, requests)
  redis.call('HSET', state, unpack(fields))
  redis.call('EXPIRE', state, expire)
  if timer_score ~= '' then redis.call('ZADD', timers, timer_score, table_id) end
  return 'ok'
end
