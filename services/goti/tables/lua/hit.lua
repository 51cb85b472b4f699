-- Counts one action against a limit per window.
-- KEYS: 1 counter
-- ARGV: 1 limit, 2 window (ms)
-- Returns 0 when allowed, else the ms until the window ends.
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if count <= tonumber(ARGV[1]) then return 0 end
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  left = tonumber(ARGV[2])
end
return left
