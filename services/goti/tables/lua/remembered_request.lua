-- Shared by commit.lua and find_request.lua: the store puts this text ahead of each when it
-- loads them, since one Redis script cannot call another.
--
-- remembered_request(requests_key, request): what the table remembers of a command.
--   requests_key: the table's requests list, whose entries are a request key (an 8-byte
--     digest of who asked and the request id, then a 4-byte digest of what was asked)
--     followed by 'first:last', the seqs the command produced.
--   request: the request key of the command asked about.
-- Returns 'duplicate', first, last when the command was seen; 'reused' when its request id
-- came with another command; nil when the table does not remember it.
local function remembered_request(requests_key, request)
  local digest = string.sub(request, 1, 8)
  local remembered = redis.call('LRANGE', requests_key, 0, -1)
  for i = #remembered, 1, -1 do
    local entry = remembered[i]
    if string.sub(entry, 1, 8) == digest then
      if string.sub(entry, 9, 12) ~= string.sub(request, 9, 12) then return 'reused' end
      local first, last = string.match(string.sub(entry, 13), '(%d+):(%d+)')
      return 'duplicate', tonumber(first), tonumber(last)
    end
  end
  return nil
end
