"""Seekers' pools in Redis: who waits in each pool, each player's seek, the pools' leases,
and the one script that pairs two seekers at a new table.

A pool is a sorted set of player ids scored by rating (:func:`goti.tables.keys.seek_pool`),
beside a hash of each seeker's wait: when it began, whom the seeker's last seek paired them
with, and the seat the seeker takes at the table a pairing makes (their name and rating as
the seek read them), so that pairing reads no player.  A player's seek is a hash of its own
(:func:`goti.tables.keys.seeker`): its request id, its pool, its rating, when it began, and
its state, the same on every replica: ``waiting``, ``left`` (its stream ended; kept a few
seconds so that the same request id resumes it), ``cancelled`` (CancelSeek took it out; the
same request id cannot seek again) or ``paired`` with a table.  A waiting seek
is kept alive by its stream; one its stream stopped renewing (its replica died) is taken out
of the pool by the next pairing that meets it.

Every change is one Lua script, so a seeker is always either in its pool or at a table, never
both and never neither, whatever fails when.  The store knows nothing of what the bytes mean.
"""

from __future__ import annotations

import asyncio
import enum
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, cast

from goti.settings import Settings
from goti.tables import keys
from goti.tables.keys import KeySpace
from goti.tables.pool_steps import NewTable, Pairing, PairingSteps, PairOutcome
from goti.tables.redis_calls import RedisClient, as_bytes, flatten, lua_script, reachable

_DEFAULTS: Final = Settings()
_HELD_RETRY_SECONDS: Final = 0.05
"""How often a cancel looks again at a seek a pairing holds between its steps."""
_CANCEL_ATTEMPTS: Final = 400
"""Looks a cancel takes at most: 20 s of holds, four times the longest a hold lasts before
anyone may settle it (``pool_steps.HOLD_MS``)."""

_SEEK: Final = lua_script("seek")
_SEEK_STATUS: Final = lua_script("seek_status")
_LEAVE: Final = lua_script("leave", using=["take_out"])
_CANCEL: Final = lua_script("cancel_seek", using=["take_out"])
_LEASE: Final = lua_script("lease")
_PAIR: Final = lua_script("pair", using=["new_table"])


class SeekState(enum.Enum):
    """Where a player's seek is, as every replica sees it."""

    NONE = ""
    WAITING = "waiting"
    LEFT = "left"
    CANCELLED = "cancelled"
    PAIRED = "paired"


class SeekInProgressError(Exception):
    """Another seek of the player's is waiting."""


class PairedBeforeError(Exception):
    """This very seek was paired already (its stream dropped before it heard)."""


class SeekStillHeldError(Exception):
    """A cancel found the seek held by a pairing for longer than any pairing takes."""


class SeekCancelledError(Exception):
    """This very seek was cancelled (CancelSeek): its request id cannot seek again."""


@dataclass(frozen=True, slots=True)
class Entered:
    """A seek in its pool: when its wait began (ms), and whether it resumed an earlier one."""

    entered_ms: int
    resumed: bool


@dataclass(frozen=True, slots=True)
class SeekStatus:
    """A seek as its stream finds it."""

    state: SeekState
    own: bool
    """Whether the seek is still this stream's (a resumed stream elsewhere takes it over)."""
    table_id: str
    seekers_in_pool: int
    opponent_rating: bytes
    """Once paired, the opponent's rating as their seek stored it (a ``Rating`` message)."""


@dataclass(frozen=True, slots=True)
class PoolEntry:
    """One player waiting in a pool."""

    player_id: str
    rating: float
    entered_ms: int
    last_opponent: str
    seat: bytes
    """The seat (a ``Seat`` message) the seek stored; empty if it stored none."""


@dataclass(frozen=True, slots=True)
class SeekRecord:
    """A player's seek as kept: its request id, its state, and once paired its table and the
    opponent's rating as the seek stored it."""

    request_id: str
    state: SeekState
    table_id: str
    opponent_rating: bytes


@dataclass(frozen=True, slots=True)
class PairedSeek:
    """A seek paired before a cancel reached it: its table, and the opponent's rating as the
    opponent's seek stored it (a ``Rating`` message)."""

    table_id: str
    opponent_rating: bytes


@dataclass(frozen=True, slots=True)
class PairedTable:
    """The table a player's last seek paired them at, and the opponent there."""

    table_id: str
    opponent: str


class PoolStore:
    """The pools and the seeks in Redis.

    Pools are named by their one-Redis key (:func:`goti.tables.keys.seek_pool`); on a Redis
    Cluster the store keeps each under its own hash tag, and a pairing, and a seek entering
    or leaving its pool, are steps of one slot each (:mod:`goti.tables.pool_steps`).
    ``paired_kept_seconds`` is how long a paired table record is kept, for a pairing that a
    seek's stream completes there.
    """

    def __init__(
        self,
        redis: RedisClient,
        keyspace: KeySpace | None = None,
        *,
        paired_kept_seconds: int = _DEFAULTS.idle_table_seconds,
    ) -> None:
        self._redis = redis
        self.keys = keyspace or KeySpace()
        self._steps = PairingSteps(redis, self.keys) if self.keys.cluster else None
        self._paired_kept_seconds = paired_kept_seconds
        self._seek = redis.register_script(_SEEK)
        self._seek_status = redis.register_script(_SEEK_STATUS)
        self._leave = redis.register_script(_LEAVE)
        self._cancel = redis.register_script(_CANCEL)
        self._lease = redis.register_script(_LEASE)
        self._pair = redis.register_script(_PAIR)

    async def enter(
        self,
        player_id: str,
        request_id: str,
        pool: str,
        *,
        rating: float,
        stored_rating: bytes,
        now_ms: int,
        stream: str,
        kept_ms: int,
        alive_ms: int,
        last_opponent: str,
        seat: bytes,
    ) -> Entered:
        """Put the player's seek in ``pool``, or resume it (the same request id and pool,
        waiting or left a moment ago) with the time it began.

        Raises :class:`SeekInProgressError` or :class:`PairedBeforeError`.
        """
        pool = self.keys.pool(pool)
        with reachable():
            reply = await self._seek(
                keys=self._seek_keys(player_id, pool),
                args=[
                    player_id,
                    request_id,
                    pool,
                    rating,
                    stored_rating,
                    now_ms,
                    stream,
                    kept_ms,
                    now_ms + alive_ms,
                    last_opponent,
                    seat,
                ],
            )
        outcome = as_bytes(reply[0])
        if outcome == b"in_progress":
            raise SeekInProgressError(player_id)
        if outcome == b"paired":
            raise PairedBeforeError(player_id)
        if outcome == b"cancelled":
            raise SeekCancelledError(player_id)
        entered = int(reply[1])
        if self._steps is not None:
            # The record first: a stream that stops before the pool is written was the
            # seek's only stream, and its resume writes the pool again.
            wait = f"{entered} {last_opponent} ".encode() + seat
            await self._steps.enter_pool(pool, player_id, rating, wait)
        return Entered(entered, resumed=outcome == b"resumed")

    def _seek_keys(self, player_id: str, pool: str) -> list[str]:
        """The keys of the seek scripts: the record, with the pool on one Redis."""
        if self._steps is not None:
            return [keys.seeker(player_id)]
        return [keys.seeker(player_id), pool, keys.seek_pool_seekers(pool)]

    async def status(
        self,
        player_id: str,
        pool: str,
        *,
        stream: str,
        kept_ms: int,
        alive_until_ms: int,
        now_ms: int | None = None,
    ) -> SeekStatus:
        """The seek's state and its pool's size, keeping the seek alive while it waits on
        this stream.  On a cluster, a pairing's hold on the seek that outlived its time is
        settled first (:meth:`~goti.tables.pool_steps.PairingSteps.settle`)."""
        pool = self.keys.pool(pool)
        for _ in range(2):
            with reachable():
                if self._steps is None:
                    reply = await self._seek_status(
                        keys=[keys.seeker(player_id), pool], args=[stream, kept_ms, alive_until_ms]
                    )
                    size = int(reply[3])
                else:
                    reply, size = await asyncio.gather(
                        self._seek_status(
                            keys=[keys.seeker(player_id)], args=[stream, kept_ms, alive_until_ms]
                        ),
                        self._redis.zcard(pool),
                    )
            held_until = int(reply[6])
            now_ms = int(time.time() * 1000) if now_ms is None else now_ms
            if self._steps is None or not reply[5] or held_until >= now_ms:
                break
            await self._steps.settle(player_id, kept_ms, self._paired_kept_seconds)
        return SeekStatus(
            SeekState(as_bytes(reply[0]).decode()),
            bool(int(reply[1])),
            as_bytes(reply[2]).decode(),
            int(size),
            as_bytes(reply[4]),
        )

    async def leave(self, player_id: str, pool: str, *, stream: str, kept_ms: int) -> bool:
        """Take a waiting seek of this stream's out of its pool, keeping its record
        ``kept_ms`` for a resume; False when it was paired meanwhile (or is not this
        stream's)."""
        pool = self.keys.pool(pool)
        with reachable():
            left = await self._leave(
                keys=self._seek_keys(player_id, pool), args=[player_id, stream, kept_ms]
            )
        if left and self._steps is not None:
            await self._steps.leave_pool(pool, [player_id])
        return bool(left)

    async def cancel(self, player_id: str, request_id: str, *, kept_ms: int) -> PairedSeek | None:
        """Take the player's seek made with ``request_id`` out of its pool for good (see
        ``lua/cancel_seek.lua``), and return once it is out: None, or the pairing that came
        first.  Nothing to do (None) when the player's seek is another request's or gone.
        On a cluster, a pairing holding the seek between its steps is waited for, or settled
        once its hold outlived its time."""
        for _ in range(_CANCEL_ATTEMPTS):
            with reachable():
                pool = _text(await self._redis.hget(keys.seeker(player_id), "pool"))
            seek_keys = self._seek_keys(player_id, pool) if pool else [keys.seeker(player_id)]
            with reachable():
                reply = await self._cancel(
                    keys=seek_keys, args=[player_id, request_id, pool, kept_ms]
                )
            outcome = as_bytes(reply[0])
            if outcome == b"paired":
                return PairedSeek(as_bytes(reply[1]).decode(), as_bytes(reply[2]))
            if outcome == b"cancelled":
                if self._steps is not None:
                    await self._steps.leave_pool(pool, [player_id])
                return None
            if outcome == b"none":
                return None
            if outcome == b"held" and self._steps is not None:
                if int(reply[1]) < int(time.time() * 1000):
                    await self._steps.settle(player_id, kept_ms, self._paired_kept_seconds)
                else:
                    await asyncio.sleep(_HELD_RETRY_SECONDS)
        raise SeekStillHeldError(player_id)

    async def seek_record(self, player_id: str) -> SeekRecord | None:
        """The player's seek as kept, if it is."""
        with reachable():
            found = await self._redis.hmget(keys.seeker(player_id), _SEEK_RECORD_FIELDS)
        return _seek_record(found)

    async def seek_and_paired_table(
        self, player_id: str
    ) -> tuple[SeekRecord | None, PairedTable | None]:
        """The player's seek as kept, and the table their last seek paired them at, with the
        opponent there (one round trip)."""
        with reachable():
            async with self._redis.pipeline(transaction=False) as pipeline:
                pipeline.hmget(keys.seeker(player_id), _SEEK_RECORD_FIELDS)
                pipeline.hmget(keys.paired_table(player_id), ["table", "opponent"])
                record, (table_id, opponent) = await pipeline.execute()
        if table_id is None:
            return _seek_record(record), None
        paired = PairedTable(as_bytes(table_id).decode(), _text(opponent))
        return _seek_record(record), paired

    async def sizes(self, pools: list[str]) -> list[int]:
        """How many wait in each pool."""
        with reachable():
            async with self._redis.pipeline(transaction=False) as pipeline:
                for pool in pools:
                    pipeline.zcard(self.keys.pool(pool))
                return [int(size) for size in await pipeline.execute()]

    async def hold(self, pool: str, holder: str, lease_ms: int) -> bool:
        """Take or renew the pool's lease for ``holder``; False while another holds it."""
        pool = self.keys.pool(pool)
        with reachable():
            return bool(
                await self._lease(keys=[keys.seek_pool_lease(pool)], args=[holder, lease_ms])
            )

    async def waiting(self, pool: str) -> list[PoolEntry]:
        """Everyone waiting in the pool."""
        pool = self.keys.pool(pool)
        with reachable():
            async with self._redis.pipeline(transaction=False) as pipeline:
                pipeline.zrange(pool, 0, -1, withscores=True)
                pipeline.hgetall(keys.seek_pool_seekers(pool))
                scored, seekers = await pipeline.execute()
        waits = {as_bytes(name): as_bytes(value) for name, value in seekers.items()}
        found = []
        for name, score in cast(list[tuple[bytes, float]], scored):
            # "entered last_opponent seat": neither of the first two has a space in it.
            entered, _, rest = waits.get(as_bytes(name), b"0 ").partition(b" ")
            last_opponent, _, seat = rest.partition(b" ")
            found.append(
                PoolEntry(
                    as_bytes(name).decode(), score, int(entered), last_opponent.decode(), seat
                )
            )
        return found

    async def pair(
        self,
        pool: str,
        first: str,
        second: str,
        table: NewTable,
        *,
        now_ms: int,
        kept_ms: int,
        paired_kept_seconds: int,
    ) -> PairOutcome:
        """Pair two waiting seekers at ``table``, all or nothing (see ``lua/pair.lua``, and
        :mod:`goti.tables.pool_steps` on a cluster)."""
        pool = self.keys.pool(pool)
        if self._steps is not None:
            pairing = Pairing(pool, first, second, kept_ms, paired_kept_seconds)
            return await self._steps.pair(pairing, table, now_ms=now_ms)
        with reachable():
            outcome = await self._pair(
                keys=[
                    pool,
                    keys.seek_pool_seekers(pool),
                    keys.seeker(first),
                    keys.seeker(second),
                    keys.table_state(table.table_id),
                    keys.table_code(table.code),
                    keys.TIMERS,
                    keys.table_log(table.table_id),
                    keys.table_requests(table.table_id),
                    keys.paired_table(first),
                    keys.paired_table(second),
                ],
                args=[
                    first,
                    second,
                    pool,
                    now_ms,
                    kept_ms,
                    table.table_id,
                    table.expire_seconds,
                    "" if table.timer_due_ms is None else table.timer_due_ms,
                    paired_kept_seconds,
                    keys.seeker_channel(first),
                    keys.seeker_channel(second),
                    *flatten(table.fields),
                ],
            )
        if outcome == b"ok":
            return PairOutcome.PAIRED
        if outcome == b"gone":
            return PairOutcome.GONE
        return PairOutcome.TABLE_TAKEN


_SEEK_RECORD_FIELDS: Final = ["request", "state", "table", "opponent_rating"]


def _text(value: object) -> str:
    return "" if value is None else as_bytes(value).decode()


def _seek_record(found: Sequence[object]) -> SeekRecord | None:
    request_id, state, table_id, rating = found
    if request_id is None:
        return None
    return SeekRecord(
        _text(request_id),
        SeekState(_text(state)),
        _text(table_id),
        b"" if rating is None else as_bytes(rating),
    )
