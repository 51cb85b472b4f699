-- On a Redis Cluster, the step that decides a pairing (new_table.lua comes first): writes
-- the paired seekers' table, unless a seeker's hold on it was given up for lost (the void
-- mark: see settle_table.lua).
-- KEYS: 1 state, 2 code, 3 log, 4 requests, 5 timers, 6 void mark
-- ARGV: 1 table id, 2 expire seconds, 3 timer score ('' = none), 4 .. field/value pairs
-- Returns 'ok', 'exists' (the id is taken, or void) or 'code_taken'.
if redis.call('EXISTS', KEYS[6]) == 1 then return 'exists' end
return new_table(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1], ARGV[2], ARGV[3], 4)
