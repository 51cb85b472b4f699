-- On a Redis Cluster: decides, for good, a pairing whose pairer stopped between its steps.
-- Its table written, the pairing happened; else the table id is marked void, so that a
-- pairer that wakes up late cannot write it any more.
-- KEYS: 1 state, 2 void mark
-- ARGV: 1 void mark kept (s)
-- Returns 'created' or 'void'.
if redis.call('EXISTS', KEYS[1]) == 1 then return 'created' end
redis.call('SET', KEYS[2], '1', 'EX', ARGV[1])
return 'void'
