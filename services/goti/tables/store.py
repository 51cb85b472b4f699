"""Tables in Redis: their state, event logs, timers and the lobby (players are in
:mod:`goti.tables.player_store`).

Every change to a table is one Lua script (the ``lua/`` folder beside this module) that checks
the table's ``seq`` and, all or nothing, writes the new fields, appends the events to the log,
publishes them, records the request for idempotent retries, and updates the timers, the lobby
and the table's expiry.
The store knows nothing of what the bytes mean: the service encodes them.

What a live table costs in Redis stays flat over a long game: the log keeps only the latest
events (a watcher further behind gets a snapshot), a command is remembered only while its
events are in the log, and long field values (the game, whose move list grows with every
move) are kept deflated.

Every Redis failure leaves as :class:`~goti.tables.redis_calls.StoreUnavailableError`, so
callers answer UNAVAILABLE without knowing Redis' own exceptions.
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, cast

from redis.asyncio.client import PubSub
from redis.asyncio.cluster import ClusterPubSub

from goti.settings import Settings
from goti.tables import keys
from goti.tables.durability import ReplicaWait
from goti.tables.keys import KeySpace, Shard
from goti.tables.packing import deflated, inflated
from goti.tables.redis_calls import (
    RedisClient,
    as_bytes,
    flatten,
    lua_script,
    reachable,
)

_DEFAULTS: Final = Settings()
"""Where the store's default log length comes from, so that it is written once."""

DEFAULT_REQUEST_MEMORY: Final = 8
"""Commands remembered per table for idempotent retries, as long as their events are still in
the log.  A retry of an older one cannot be applied twice either: its ``expected_seq`` is
stale by then, so it is refused."""
REQUEST_DIGEST_BYTES: Final = 8
FINGERPRINT_BYTES: Final = 4


# Redis runs each script alone and one cannot call another (Redis 7's function libraries
# could share code, but Goti runs on 6.2 too), so the scripts that look a command up each get
# the lookup's text ahead of their own.
_REMEMBERED_REQUEST: Final = lua_script("remembered_request")
_CREATE: Final = lua_script("create", using=["new_table"])
_COMMIT: Final = _REMEMBERED_REQUEST + lua_script("commit")
_FIND_REQUEST: Final = _REMEMBERED_REQUEST + lua_script("find_request")
_DISCARD: Final = lua_script("discard")
_EVENTS_AFTER: Final = lua_script("events_after")
_CLAIM: Final = lua_script("claim")
_RELEASE: Final = lua_script("release")


class TableNotFoundError(LookupError):
    """No table with this id (never created, cleared away, or expired)."""


class StaleSeqError(Exception):
    """The table moved on since the caller read it; ``current_seq`` is where it is now."""

    def __init__(self, current_seq: int) -> None:
        super().__init__(f"the table is at seq {current_seq}")
        self.current_seq = current_seq


class RequestReusedError(Exception):
    """The request id was used before, by the same player, for a different command."""


class TableExistsError(Exception):
    """The table id is already taken."""


class CodeTakenError(Exception):
    """The join code is already another table's."""


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


def request_key(player_id: str, request_id: str, fingerprint: bytes) -> bytes:
    """How a table remembers a player's command: a digest of who asked and the request id,
    then a digest of what was asked (so a request id reused for another command shows).

    Short on purpose: a table remembers only its latest few commands, so eight bytes tell
    them apart, and every entry costs memory on every live table."""
    who = hashlib.blake2b(
        f"{player_id}\0{request_id}".encode(), digest_size=REQUEST_DIGEST_BYTES
    ).digest()
    what = hashlib.blake2b(fingerprint, digest_size=FINGERPRINT_BYTES).digest()
    return who + what


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
    """The events to append to the log, at least one; they must carry the seqs that follow
    the read one (read seq + 1, + 2, ...)."""
    published: Sequence[bytes] | None = None
    """The same events as watchers get them live, one for one; None publishes ``events``.
    The log may keep a leaner form than what is published."""
    request_key: bytes | None = None
    """Identifies the command (:func:`request_key`), so that a retry finds what it produced."""
    timer: TimerUpdate = TimerUpdate.KEEP
    timer_due_ms: int = 0
    lobby: LobbyUpdate = LobbyUpdate.KEEP
    lobby_score: int = 0
    lobby_listing: bytes = b""
    lobby_message: bytes = b""
    """Published on the lobby channel when the listing changes."""
    expire_seconds: int = 0
    """Keep the table this long from now, then let Redis drop it (0: as it was)."""
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


@dataclass(frozen=True, slots=True)
class LobbyEntry:
    """One open table in the lobby: its id, when it opened (ms) and its listing."""

    table_id: str
    opened_ms: int
    listing: bytes


class TableStore:
    """Tables in Redis, every change behind a compare-and-set on ``seq``."""

    def __init__(
        self,
        redis: RedisClient,
        *,
        keyspace: KeySpace | None = None,
        table_log_events: int = _DEFAULTS.table_log_events,
        request_memory: int = DEFAULT_REQUEST_MEMORY,
        replica_wait: ReplicaWait | None = None,
    ) -> None:
        self._redis = redis
        self.keys = keyspace or KeySpace()
        """Where the tables are: one Redis's names, or a cluster's shards."""
        # Each timer poll starts with another shard, so that a replica busy with a full batch
        # from one shard does not keep the others waiting.
        self._next_shard = 0
        # A commit is answered once the replicas hold it, where the operator asks for that.
        self._replica_wait = replica_wait or ReplicaWait(redis)
        self._table_log_events = table_log_events
        self._request_memory = request_memory
        self._create = redis.register_script(_CREATE)
        self._commit = redis.register_script(_COMMIT)
        self._find_request = redis.register_script(_FIND_REQUEST)
        self._discard = redis.register_script(_DISCARD)
        self._events_after = redis.register_script(_EVENTS_AFTER)
        self._claim = redis.register_script(_CLAIM)
        self._release = redis.register_script(_RELEASE)

    @property
    def redis(self) -> RedisClient:
        """The client this store uses."""
        return self._redis

    def subscriber(self) -> PubSub | ClusterPubSub:
        """A new pub/sub client (its owner closes it): one connection on one Redis; on a
        cluster one per node that serves a channel subscribed (sharded pub/sub)."""
        return self._redis.pubsub(ignore_subscribe_messages=False)

    async def ping(self) -> None:
        """Check that Redis answers."""
        with reachable():
            await self._redis.ping()

    # -- tables -------------------------------------------------------------------------------

    async def create(
        self,
        table_id: str,
        code: str,
        fields: Mapping[str, bytes],
        *,
        expire_seconds: int,
        lobby_score: int | None = None,
        lobby_listing: bytes = b"",
        lobby_message: bytes = b"",
        timer_due_ms: int | None = None,
    ) -> None:
        """Create a table at seq 0 with an empty log, kept ``expire_seconds`` unless changed.

        Raises :class:`TableExistsError` if the id is taken, :class:`CodeTakenError` if the
        code is, and ValueError for a code of another shard (see
        :meth:`~goti.tables.keys.KeySpace.code_fits`).
        """
        table = self._table_keys(table_id, code)
        with reachable():
            outcome = await self._create(
                keys=[
                    table.state,
                    self.keys.code(code),
                    table.shard.lobby,
                    table.shard.lobby_listings,
                    table.shard.timers,
                    table.log,
                    table.requests,
                ],
                args=[
                    table_id,
                    "" if lobby_score is None else lobby_score,
                    lobby_listing,
                    table.shard.lobby_channel,
                    lobby_message,
                    "" if timer_due_ms is None else timer_due_ms,
                    expire_seconds,
                    self.keys.publish_command,
                    *flatten(deflated(fields)),
                ],
            )
        if outcome == b"exists":
            raise TableExistsError(f"table {table_id} exists")
        if outcome != b"ok":
            raise CodeTakenError(f"code {code} is taken")

    def _table_keys(self, table_id: str, code: str = "") -> keys.TableKeys:
        """A table's keys, checking that its code (if any) shares its shard."""
        if code and not self.keys.code_fits(table_id, code):
            raise ValueError(f"the code {code} is not in the shard of table {table_id}")
        return self.keys.table(table_id)

    async def load(self, table_id: str) -> StoredTable:
        """The table's seq and fields; raise :class:`TableNotFoundError` if there is none."""
        with reachable():
            raw = await self._redis.hgetall(self.keys.table(table_id).state)
        if not raw:
            raise TableNotFoundError(table_id)
        fields = {as_bytes(name).decode(): inflated(as_bytes(value)) for name, value in raw.items()}
        return StoredTable(int(fields["seq"]), fields)

    async def seq(self, table_id: str) -> int | None:
        """The table's seq now; None when the table is gone."""
        with reachable():
            value = await self._redis.hget(self.keys.table(table_id).state, "seq")
        return None if value is None else int(value)

    async def commit(self, table_id: str, expected_seq: int, change: Change) -> Committed:
        """Apply ``change`` if the table is still at ``expected_seq``.

        A change whose request key was seen before is not applied again: the seqs it produced
        then come back with ``duplicate`` set.  Raises :class:`StaleSeqError` when the table
        moved on, :class:`RequestReusedError` when the request id was used for another
        command, and :class:`TableNotFoundError` when the table is gone.
        """
        published = change.events if change.published is None else change.published
        if not change.events or len(published) != len(change.events):
            raise ValueError("a change appends at least one event, published one for one")
        table = self._table_keys(table_id, change.code)
        with reachable():
            reply = await self._replica_wait.run(
                self._commit,
                keys=[
                    table.state,
                    table.log,
                    table.requests,
                    table.shard.timers,
                    table.shard.lobby,
                    table.shard.lobby_listings,
                    # The join code expires with the table; without one, the state key stands in.
                    self.keys.code(change.code) if change.code else table.state,
                ],
                args=[
                    table_id,
                    expected_seq,
                    change.request_key or "",
                    len(change.events),
                    table.channel,
                    change.timer.value,
                    change.timer_due_ms,
                    change.lobby.value,
                    change.lobby_score,
                    change.lobby_listing,
                    table.shard.lobby_channel,
                    change.lobby_message,
                    self._table_log_events,
                    change.expire_seconds,
                    self._request_memory,
                    self.keys.publish_command,
                    *change.events,
                    *published,
                    *flatten(deflated(change.fields)),
                ],
            )
        status, first, last = reply[0], int(reply[1]), int(reply[2])
        if status == b"ok":
            return Committed(first, last)
        if status == b"duplicate":
            return Committed(first, last, duplicate=True)
        if status == b"stale":
            raise StaleSeqError(first)
        if status == b"reused":
            raise RequestReusedError(table_id)
        raise TableNotFoundError(table_id)

    async def find_request(self, table_id: str, key: bytes) -> Committed | None:
        """What a remembered command produced, or None if the table does not remember it.

        Raises :class:`RequestReusedError` if the request id was used for another command.
        """
        with reachable():
            reply = await self._find_request(keys=[self.keys.table(table_id).requests], args=[key])
        if reply[0] == b"duplicate":
            return Committed(int(reply[1]), int(reply[2]), duplicate=True)
        if reply[0] == b"reused":
            raise RequestReusedError(table_id)
        return None

    async def discard(
        self, table_id: str, expected_seq: int, code: str, *, lobby_message: bytes = b""
    ) -> bool:
        """Delete a table that is still at ``expected_seq``, with its log, code, timer and
        lobby listing; False if it moved on or is gone."""
        table = self._table_keys(table_id, code)
        with reachable():
            outcome = await self._discard(
                keys=[
                    table.state,
                    table.log,
                    table.requests,
                    self.keys.code(code),
                    table.shard.timers,
                    table.shard.lobby,
                    table.shard.lobby_listings,
                ],
                args=[
                    table_id,
                    expected_seq,
                    table.shard.lobby_channel,
                    lobby_message,
                    self.keys.publish_command,
                ],
            )
        return bool(outcome == b"ok")

    async def events_after(self, table_id: str, after_seq: int) -> EventsAfter:
        """The events after ``after_seq``, oldest first (None if trimmed from the log)."""
        table = self.keys.table(table_id)
        with reachable():
            reply = await self._events_after(keys=[table.state, table.log], args=[after_seq])
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
        with reachable():
            table_id = await self._redis.get(self.keys.code(code))
        return None if table_id is None else as_bytes(table_id).decode()

    # -- the lobby ----------------------------------------------------------------------------

    async def lobby(self, limit: int) -> list[bytes]:
        """The listings of the open public tables, newest first."""
        return [entry.listing for entry in await self.lobby_page(None, limit)]

    async def lobby_page(self, before: tuple[int, str] | None, limit: int) -> list[LobbyEntry]:
        """Up to ``limit`` open tables, newest first, starting after the entry ``before``
        (its opening time and id), or from the newest one; on a cluster, the newest of every
        shard's lobby, merged."""
        shards = self.keys.shards
        with reachable():
            async with self._redis.pipeline(transaction=False) as pipeline:
                for shard in shards:
                    if before is None:
                        pipeline.zrevrangebyscore(
                            shard.lobby, "+inf", "-inf", start=0, num=limit, withscores=True
                        )
                    else:
                        # Entries with the same score come in reverse id order: skip to the
                        # cursor.
                        pipeline.zrevrangebyscore(
                            shard.lobby, before[0], "-inf", start=0, num=limit + 64, withscores=True
                        )
                replies = cast(list[list[tuple[bytes, float]]], await pipeline.execute())
            found = sorted(
                (
                    (int(score), as_bytes(name), shard)
                    for shard, reply in zip(shards, replies, strict=True)
                    for name, score in reply
                    if before is None
                    or int(score) < before[0]
                    or as_bytes(name).decode() < before[1]
                ),
                key=lambda entry: (entry[0], entry[1]),
                reverse=True,
            )[:limit]
            if not found:
                return []
            listed = await self._listings(found)
        return [
            LobbyEntry(name.decode(), score, listed[name])
            for score, name, _ in found
            if name in listed
        ]

    async def _listings(self, found: Sequence[tuple[int, bytes, Shard]]) -> dict[bytes, bytes]:
        """The listings of lobby entries, read from each one's shard in one round trip."""
        by_shard: dict[int, list[bytes]] = {}
        for _, name, shard in found:
            by_shard.setdefault(shard.index, []).append(name)
        async with self._redis.pipeline(transaction=False) as pipeline:
            for index, names in by_shard.items():
                pipeline.hmget(self.keys.shards[index].lobby_listings, names)
            replies = await pipeline.execute()
        return {
            name: as_bytes(listing)
            for names, listings in zip(by_shard.values(), replies, strict=True)
            for name, listing in zip(names, listings, strict=True)
            if listing is not None
        }

    # -- timers -------------------------------------------------------------------------------

    async def claim_due(self, now_ms: int, lease_ms: int, limit: int) -> Claim:
        """Take up to ``limit`` tables whose timers are due, for ``lease_ms``; on a cluster,
        from every shard, another shard first at each call.

        A replica that dies while holding them leaves them to be claimed again once the
        lease ends; the action itself goes through :meth:`commit`, so two replicas never
        both land one.
        """
        shards = self.keys.shards
        if len(shards) == 1:
            return await self._claim_from([(shards[0], limit)], now_ms, lease_ms)
        first = self._next_shard % len(shards)
        self._next_shard = first + 1
        rotated = shards[first:] + shards[:first]
        # One round trip counts what is due in every shard (the shards' nodes answer in
        # parallel); only the shards with something due are claimed from.
        with reachable():
            async with self._redis.pipeline(transaction=False) as pipeline:
                for shard in rotated:
                    pipeline.zcount(shard.timers, "-inf", now_ms)
                due = [int(count) for count in await pipeline.execute()]
        wanted: list[tuple[Shard, int]] = []
        room = limit
        for shard, count in zip(rotated, due, strict=True):
            if count and room:
                wanted.append((shard, min(count, room)))
                room -= wanted[-1][1]
        if not wanted:
            return Claim([], now_ms + lease_ms)
        return await self._claim_from(wanted, now_ms, lease_ms)

    async def _claim_from(
        self, wanted: Sequence[tuple[Shard, int]], now_ms: int, lease_ms: int
    ) -> Claim:
        with reachable():
            replies = await asyncio.gather(
                *(
                    self._claim(keys=[shard.timers], args=[now_ms, lease_ms, most])
                    for shard, most in wanted
                )
            )
        return Claim(
            [table_id.decode() for reply in replies for table_id in reply[1:]],
            now_ms + lease_ms,
        )

    async def release(
        self, table_id: str, lease_until_ms: int, *, reschedule_ms: int | None = None
    ) -> None:
        """Drop a claimed timer (or move it to ``reschedule_ms``), unless it was set again
        meanwhile."""
        with reachable():
            await self._release(
                keys=[self.keys.table(table_id).shard.timers],
                args=[table_id, lease_until_ms, "" if reschedule_ms is None else reschedule_ms],
            )

    async def remember_creation(
        self, player_id: str, request_id: str, value: bytes, ttl_seconds: int
    ) -> bytes | None:
        """Remember what a CreateTable request is making; the earlier value if the request
        was seen before (then nothing is written)."""
        key = keys.player_request(player_id, request_id)
        with reachable():
            if await self._redis.set(key, value, nx=True, ex=ttl_seconds):
                return None
            earlier = await self._redis.get(key)
        return None if earlier is None else as_bytes(earlier)

    async def forget_creation(self, player_id: str, request_id: str) -> None:
        """Forget a CreateTable request that failed, so that its retry starts afresh."""
        with reachable():
            await self._redis.delete(keys.player_request(player_id, request_id))
