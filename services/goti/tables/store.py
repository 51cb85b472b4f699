"""The tables service's one I/O adapter: tables, their event logs and the timers, in Redis.

Every change to a table is one Lua script that checks the table's ``seq`` and, all or
nothing, writes the new fields, appends the event to the log, publishes it, records the
request for idempotent retries, and updates the timers and the lobby.  The store knows
nothing of what the bytes mean: the service encodes them.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from redis.asyncio import Redis

from goti.tables import keys

DEFAULT_LOG_LIMIT: Final = 400
"""Events kept per table: a long game plus its draw offers; older ones give way to snapshots."""
DEFAULT_REQUEST_TTL_SECONDS: Final = 24 * 3600
"""How long a request key is remembered for idempotent retries."""

_CREATE = """
-- KEYS: state, code, lobby, lobby listings, timers
-- ARGV: table id, lobby score ('' = not listed), listing, lobby channel, lobby message,
--       timer score ('' = none), then field/value pairs
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
if not redis.call('SET', KEYS[2], ARGV[1], 'NX') then return 'code_taken' end
local fields = {'seq', 0, 'log_first', 1}
for i = 7, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', KEYS[1], unpack(fields))
if ARGV[2] ~= '' then
  redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[3])
  redis.call('PUBLISH', ARGV[4], ARGV[5])
end
if ARGV[6] ~= '' then redis.call('ZADD', KEYS[5], ARGV[6], ARGV[1]) end
return 'ok'
"""

_COMMIT = """
-- KEYS: state, log, requests, timers, lobby, lobby listings, code
-- ARGV: 1 table id, 2 expected seq, 3 request key ('' = none), 4 event count n,
--       5 table channel, 6 timer op (keep|set|clear), 7 timer score,
--       8 lobby op (keep|list|unlist), 9 lobby score, 10 listing, 11 lobby channel,
--       12 lobby message, 13 log limit, 14 expire seconds (0 = keep), 15 request ttl,
--       16 .. 15+n the events, then field/value pairs
local seq = redis.call('HGET', KEYS[1], 'seq')
if not seq then return {'missing', -1, -1} end
seq = tonumber(seq)
if ARGV[3] ~= '' then
  local done = redis.call('HGET', KEYS[3], ARGV[3])
  if done then
    local first, last = string.match(done, '(%d+):(%d+)')
    return {'duplicate', tonumber(first), tonumber(last)}
  end
end
if seq ~= tonumber(ARGV[2]) then return {'stale', seq, seq} end
local count = tonumber(ARGV[4])
local new_seq = seq + count
local fields = {'seq', new_seq}
for i = 16 + count, #ARGV do fields[#fields + 1] = ARGV[i] end
local length = 0
for i = 16, 15 + count do
  length = redis.call('RPUSH', KEYS[2], ARGV[i])
  redis.call('PUBLISH', ARGV[5], ARGV[i])
end
local limit = tonumber(ARGV[13])
if length > limit then
  redis.call('LTRIM', KEYS[2], length - limit, -1)
  fields[#fields + 1] = 'log_first'
  fields[#fields + 1] = new_seq - limit + 1
end
redis.call('HSET', KEYS[1], unpack(fields))
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[3], ARGV[3], (seq + 1) .. ':' .. new_seq)
  redis.call('EXPIRE', KEYS[3], tonumber(ARGV[15]))
end
if ARGV[6] == 'set' then
  redis.call('ZADD', KEYS[4], ARGV[7], ARGV[1])
elseif ARGV[6] == 'clear' then
  redis.call('ZREM', KEYS[4], ARGV[1])
end
if ARGV[8] == 'list' then
  redis.call('ZADD', KEYS[5], ARGV[9], ARGV[1])
  redis.call('HSET', KEYS[6], ARGV[1], ARGV[10])
  redis.call('PUBLISH', ARGV[11], ARGV[12])
elseif ARGV[8] == 'unlist' then
  if redis.call('ZREM', KEYS[5], ARGV[1]) == 1 then
    redis.call('HDEL', KEYS[6], ARGV[1])
    redis.call('PUBLISH', ARGV[11], ARGV[12])
  end
end
local expire = tonumber(ARGV[14])
if expire > 0 then
  for i = 1, 3 do redis.call('EXPIRE', KEYS[i], expire) end
  redis.call('EXPIRE', KEYS[7], expire)
end
return {'ok', seq + 1, new_seq}
"""

_EVENTS_AFTER = """
-- KEYS: state, log.  ARGV: after seq.  Returns {seq, log_first, events...}, or {-1} if none.
local state = redis.call('HMGET', KEYS[1], 'seq', 'log_first')
if not state[1] then return {-1} end
local seq = tonumber(state[1])
local first = tonumber(state[2])
local after = tonumber(ARGV[1])
local reply = {seq, first}
if after < seq and after + 1 >= first then
  local events = redis.call('LRANGE', KEYS[2], after + 1 - first, -1)
  for i = 1, #events do reply[#reply + 1] = events[i] end
end
return reply
"""

_CLAIM = """
-- KEYS: timers.  ARGV: now (ms), lease (ms), limit.  Due tables, pushed back by the lease.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
local until_ms = tonumber(ARGV[1]) + tonumber(ARGV[2])
for i = 1, #due do redis.call('ZADD', KEYS[1], until_ms, due[i]) end
return {until_ms, unpack(due)}
"""

_RELEASE = """
-- KEYS: timers.  ARGV: table id, lease end.  Drops a claimed entry nobody has moved since.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
"""


class TableNotFoundError(LookupError):
    """No table with this id (never created, or expired)."""


class StaleSeqError(Exception):
    """The table moved on since the caller read it; ``current_seq`` is where it is now."""

    def __init__(self, current_seq: int) -> None:
        super().__init__(f"the table is at seq {current_seq}")
        self.current_seq = current_seq


class TableExistsError(Exception):
    """The table id or its join code is already taken."""


class TimerUpdate(enum.Enum):
    """What a change does to the table's entry in the timers."""

    KEEP = "keep"
    SET = "set"
    CLEAR = "clear"


class LobbyUpdate(enum.Enum):
    """What a change does to the table's lobby listing."""

    KEEP = "keep"
    LIST = "list"
    UNLIST = "unlist"


@dataclass(frozen=True, slots=True)
class StoredTable:
    """A table as read: its ``seq`` and the service's fields."""

    seq: int
    fields: Mapping[str, bytes]


@dataclass(frozen=True, slots=True)
class Change:
    """One change to a table, applied whole or not at all by :meth:`TableStore.commit`."""

    fields: Mapping[str, bytes]
    """Fields to write (the rest stay as they are)."""
    events: Sequence[bytes]
    """The events to append and publish, at least one; they must carry the seqs that follow
    the read one (read seq + 1, + 2, ...)."""
    request_key: str | None = None
    """Identifies the command, so that a retry finds the seq it produced."""
    timer: TimerUpdate = TimerUpdate.KEEP
    timer_due_ms: int = 0
    lobby: LobbyUpdate = LobbyUpdate.KEEP
    lobby_score: int = 0
    lobby_listing: bytes = b""
    lobby_message: bytes = b""
    """Published on the lobby channel when the listing changes."""
    expire_seconds: int = 0
    """When the table is finished: keep it this long, then let Redis drop it."""
    code: str = ""
    """The table's join code, which expires with it."""


@dataclass(frozen=True, slots=True)
class Committed:
    """A change's result: the seqs of its first and last events, and whether it had been
    applied before (a retried request)."""

    first_seq: int
    last_seq: int
    duplicate: bool = False


@dataclass(frozen=True, slots=True)
class EventsAfter:
    """Events after a seq: ``events`` is None when the log no longer reaches back that far."""

    seq: int
    events: list[bytes] | None


@dataclass(slots=True)
class Claim:
    """Tables whose timers fell due, held for this replica until ``lease_until_ms``."""

    table_ids: list[str]
    lease_until_ms: int


class TableStore:
    """Tables in Redis, behind the compare-and-set on ``seq``."""

    def __init__(
        self,
        redis: Redis,
        *,
        log_limit: int = DEFAULT_LOG_LIMIT,
        request_ttl_seconds: int = DEFAULT_REQUEST_TTL_SECONDS,
    ) -> None:
        self._redis = redis
        self._log_limit = log_limit
        self._request_ttl = request_ttl_seconds
        self._create = redis.register_script(_CREATE)
        self._commit = redis.register_script(_COMMIT)
        self._events_after = redis.register_script(_EVENTS_AFTER)
        self._claim = redis.register_script(_CLAIM)
        self._release = redis.register_script(_RELEASE)

    @property
    def redis(self) -> Redis:
        """The client this store uses."""
        return self._redis

    async def create(
        self,
        table_id: str,
        code: str,
        fields: Mapping[str, bytes],
        *,
        lobby_score: int | None = None,
        lobby_listing: bytes = b"",
        lobby_message: bytes = b"",
        timer_due_ms: int | None = None,
    ) -> None:
        """Create a table at seq 0 with an empty log.

        Raises :class:`TableExistsError` if the id or the code is taken.
        """
        outcome = await self._create(
            keys=[
                keys.table_state(table_id),
                keys.table_code(code),
                keys.LOBBY,
                keys.LOBBY_LISTINGS,
                keys.TIMERS,
            ],
            args=[
                table_id,
                "" if lobby_score is None else lobby_score,
                lobby_listing,
                keys.LOBBY_CHANNEL,
                lobby_message,
                "" if timer_due_ms is None else timer_due_ms,
                *_flatten(fields),
            ],
        )
        if outcome != b"ok":
            raise TableExistsError(f"table {table_id} or code {code}: {outcome.decode()}")

    async def load(self, table_id: str) -> StoredTable:
        """The table's seq and fields; raise :class:`TableNotFoundError` if there is none."""
        raw = await self._redis.hgetall(keys.table_state(table_id))
        if not raw:
            raise TableNotFoundError(table_id)
        fields = {_as_bytes(name).decode(): _as_bytes(value) for name, value in raw.items()}
        return StoredTable(int(fields["seq"]), fields)

    async def commit(self, table_id: str, expected_seq: int, change: Change) -> Committed:
        """Apply ``change`` if the table is still at ``expected_seq``.

        A change whose request key was seen before is not applied again: the seqs it produced
        then come back with ``duplicate`` set.  Raises :class:`StaleSeqError` when the table
        moved on and :class:`TableNotFoundError` when it is gone.
        """
        reply = await self._commit(
            keys=[
                keys.table_state(table_id),
                keys.table_log(table_id),
                keys.table_requests(table_id),
                keys.TIMERS,
                keys.LOBBY,
                keys.LOBBY_LISTINGS,
                # The join code expires with the table; without one, the state key stands in.
                keys.table_code(change.code) if change.code else keys.table_state(table_id),
            ],
            args=[
                table_id,
                expected_seq,
                change.request_key or "",
                len(change.events),
                keys.table_channel(table_id),
                change.timer.value,
                change.timer_due_ms,
                change.lobby.value,
                change.lobby_score,
                change.lobby_listing,
                keys.LOBBY_CHANNEL,
                change.lobby_message,
                self._log_limit,
                change.expire_seconds,
                self._request_ttl,
                *change.events,
                *_flatten(change.fields),
            ],
        )
        status, first, last = reply[0], int(reply[1]), int(reply[2])
        if status == b"ok":
            return Committed(first, last)
        if status == b"duplicate":
            return Committed(first, last, duplicate=True)
        if status == b"stale":
            raise StaleSeqError(first)
        raise TableNotFoundError(table_id)

    async def events_after(self, table_id: str, after_seq: int) -> EventsAfter:
        """The events after ``after_seq``, oldest first (None if trimmed from the log)."""
        reply = await self._events_after(
            keys=[keys.table_state(table_id), keys.table_log(table_id)], args=[after_seq]
        )
        seq = int(reply[0])
        if seq < 0:
            raise TableNotFoundError(table_id)
        first = int(reply[1])
        if after_seq >= seq:
            return EventsAfter(seq, [])
        if after_seq + 1 < first:
            return EventsAfter(seq, None)
        return EventsAfter(seq, [bytes(event) for event in reply[2:]])

    async def events_between(
        self, table_id: str, first_seq: int, last_seq: int
    ) -> list[bytes] | None:
        """The events numbered ``first_seq`` to ``last_seq``, if the log still holds them."""
        found = await self.events_after(table_id, first_seq - 1)
        if found.events is None or len(found.events) < last_seq - first_seq + 1:
            return None
        return found.events[: last_seq - first_seq + 1]

    async def table_for_code(self, code: str) -> str | None:
        """The id of the table with this join code."""
        table_id = await self._redis.get(keys.table_code(code))
        return None if table_id is None else _as_bytes(table_id).decode()

    async def lobby(self, limit: int) -> list[bytes]:
        """The listings of the open public tables, newest first."""
        table_ids = [
            _as_bytes(name)
            for name in await self._redis.zrange(keys.LOBBY, 0, limit - 1, desc=True)
        ]
        if not table_ids:
            return []
        listings = await self._redis.hmget(keys.LOBBY_LISTINGS, table_ids)
        return [_as_bytes(listing) for listing in listings if listing is not None]

    async def claim_due(self, now_ms: int, lease_ms: int, limit: int) -> Claim:
        """Take up to ``limit`` tables whose timers are due, for ``lease_ms``.

        A replica that dies while holding them leaves them to be claimed again once the
        lease ends; the action itself goes through :meth:`commit`, so two replicas never
        both land one.
        """
        reply = await self._claim(keys=[keys.TIMERS], args=[now_ms, lease_ms, limit])
        return Claim([table_id.decode() for table_id in reply[1:]], int(reply[0]))

    async def release(self, table_id: str, lease_until_ms: int) -> None:
        """Drop a claimed timer that needed no action, unless it was reset meanwhile."""
        await self._release(keys=[keys.TIMERS], args=[table_id, lease_until_ms])


def _as_bytes(value: object) -> bytes:
    """A reply item as bytes (the client is made with ``decode_responses=False``)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    raise TypeError(f"unexpected Redis reply item {value!r}")


def _flatten(fields: Mapping[str, bytes]) -> list[str | bytes]:
    flat: list[str | bytes] = []
    for name, value in fields.items():
        flat.append(name)
        flat.append(value)
    return flat
