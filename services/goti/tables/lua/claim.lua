-- Takes the tables whose timers are due, pushed back by the lease.
-- KEYS: 1 timers
-- ARGV: 1 now (ms), 2 lease (ms), 3 most tables taken
-- Returns {lease end (ms), table ids...}.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
local until_ms = tonumber(ARGV[1]) + tonumber(ARGV[2])
for i = 1, #due do redis.call('ZADD', KEYS[1], until_ms, due[i]) end
return {until_ms, unpack(due)}
