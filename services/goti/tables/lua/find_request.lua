-- What a table remembers of a command (remembered_request.lua comes first).
-- KEYS: 1 requests
-- ARGV: 1 request key
-- Returns {'duplicate', first seq, last seq}, {'reused'} or {'none'}.
local found, first, last = remembered_request(KEYS[1], ARGV[1])
if found == 'duplicate' then return {found, first, last} end
if found == 'reused' then return {found} end
return {'none'}
