-- Takes or renews a lease: held by ARGV[1] for ARGV[2] ms unless someone else holds it.
-- KEYS: 1 lease
-- ARGV: 1 holder, 2 lease (ms)
-- Returns 1 when ARGV[1] holds it now, else 0.
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
