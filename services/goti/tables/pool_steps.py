"""Pairing on a Redis Cluster, in steps of one slot each.

On one Redis a pairing is one Lua script (``lua/pair.lua``).  On a cluster the pool, each
seeker's seek and the new table are in different slots, and no script may touch two, so a
pairing is a sequence of single-slot steps, each safe to repeat, ordered so that no user ever
sees half of one:

1. **Hold** each seeker for the table (``reserve.lua``, in the seeker's slot): only a seeker
   still waiting in the pool, kept alive by its stream and held by no other pairing.  A held
   seek cannot leave (its stream ending leaves it held) and stays ``waiting`` to its stream.
   If the second seeker cannot be held, the first is let go (``unreserve.lua``).
2. **Write the table** (``pair_table.lua``, in the table's slot).  This is the step that
   decides: from here on the pairing happened.
3. **Confirm** each seeker (``confirm.lua``): marked paired at the table, its last paired
   table recorded, its stream woken.
4. **Take both out of the pool** (its own slot): the pool is an index of the seeks, and an
   entry left behind (a pairer that stopped here) is taken out by the next pairing that
   tries to hold it.

A pairer that stops between steps 1 and 3 leaves seekers held, each with the table id, the
opponent and a time limit.  Whoever meets a hold past its limit (the seeker's stream, the
next pairing) settles it (:meth:`PairingSteps.settle`): in the table's slot,
``settle_table.lua`` finds the table written (then both seekers are confirmed, as the pairer
would have) or marks the table id void, so that a pairer waking up late cannot write it any
more (then both seekers are let go).  Either way both seekers end in the same state.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from goti.tables import keys
from goti.tables.keys import KeySpace
from goti.tables.redis_calls import RedisClient, as_bytes, flatten, lua_script, reachable

log = logging.getLogger(__name__)

HOLD_MS: Final = 5_000
"""How long a pairing holds a seeker before anyone may settle the hold: many times what the
steps take, and less than a seek record is kept once its stream stops renewing it."""
VOID_KEPT_SECONDS: Final = 3_600
"""How long a table id given up stays unusable: far longer than a pairer may stall."""

_RESERVE: Final = lua_script("reserve")
_UNRESERVE: Final = lua_script("unreserve")
_CONFIRM: Final = lua_script("confirm")
_PAIR_TABLE: Final = lua_script("pair_table", using=["new_table"])
_SETTLE_TABLE: Final = lua_script("settle_table")


class PairOutcome(enum.Enum):
    """What a pairing did."""

    PAIRED = "ok"
    GONE = "gone"
    """A seeker was no longer waiting there; nothing was written but its leaving the pool."""
    TABLE_TAKEN = "taken"
    """The table id or its code was taken: nothing was written; draw others and try again."""


@dataclass(frozen=True, slots=True)
class NewTable:
    """What a pairing writes as the paired seekers' table."""

    table_id: str
    code: str
    fields: Mapping[str, bytes]
    expire_seconds: int
    timer_due_ms: int | None


@dataclass(frozen=True, slots=True)
class Pairing:
    """One pairing under way: its pool, its two seekers and how long a paired seek and
    paired table record are kept."""

    pool: str
    first: str
    second: str
    kept_ms: int
    paired_kept_seconds: int


class PairingSteps:
    """The steps of a pairing on a Redis Cluster (see the module)."""

    def __init__(self, redis: RedisClient, keyspace: KeySpace) -> None:
        self._redis = redis
        self._keys = keyspace
        self._reserve = redis.register_script(_RESERVE)
        self._unreserve = redis.register_script(_UNRESERVE)
        self._confirm = redis.register_script(_CONFIRM)
        self._pair_table = redis.register_script(_PAIR_TABLE)
        self._settle_table = redis.register_script(_SETTLE_TABLE)

    async def pair(self, pairing: Pairing, table: NewTable, *, now_ms: int) -> PairOutcome:
        """Pair two waiting seekers at ``table``: every step, or none that anyone sees."""
        held: list[tuple[str, bytes]] = []
        for player_id, opponent in (
            (pairing.first, pairing.second),
            (pairing.second, pairing.first),
        ):
            rating = await self._hold(pairing, player_id, opponent, table.table_id, now_ms)
            if rating is None:
                await self._let_go(held, table.table_id)
                return PairOutcome.GONE
            held.append((player_id, rating))
        created = await self._write_table(table)
        if created != b"ok":
            await self._let_go(held, table.table_id)
            return PairOutcome.TABLE_TAKEN
        (first, first_rating), (second, second_rating) = held
        await self._confirm_both(pairing, table.table_id, (first_rating, second_rating))
        await self.leave_pool(pairing.pool, [first, second])
        return PairOutcome.PAIRED

    async def _hold(
        self, pairing: Pairing, player_id: str, opponent: str, table_id: str, now_ms: int
    ) -> bytes | None:
        """Hold one seeker for the table: its stored rating, or None when it cannot be held
        (then it is taken out of the pool, unless another pairing holds it)."""
        with reachable():
            reply = await self._reserve(
                keys=[keys.seeker(player_id)],
                args=[
                    pairing.pool,
                    now_ms,
                    table_id,
                    now_ms + HOLD_MS,
                    opponent,
                    pairing.kept_ms,
                ],
            )
        outcome = as_bytes(reply[0])
        if outcome == b"ok":
            return as_bytes(reply[1])
        if outcome == b"reserved":
            if int(reply[2]) < now_ms:
                await self.settle(player_id, pairing.kept_ms, pairing.paired_kept_seconds)
        else:
            await self.leave_pool(pairing.pool, [player_id])
        return None

    async def _let_go(self, held: list[tuple[str, bytes]], table_id: str) -> None:
        with reachable():
            for player_id, _ in held:
                await self._unreserve(keys=[keys.seeker(player_id)], args=[table_id])

    async def _write_table(self, table: NewTable) -> bytes:
        kept = self._keys.table(table.table_id)
        with reachable():
            outcome = await self._pair_table(
                keys=[
                    kept.state,
                    self._keys.code(table.code),
                    kept.log,
                    kept.requests,
                    kept.shard.timers,
                    kept.void,
                ],
                args=[
                    table.table_id,
                    table.expire_seconds,
                    "" if table.timer_due_ms is None else table.timer_due_ms,
                    *flatten(table.fields),
                ],
            )
        return as_bytes(outcome)

    async def _confirm_both(
        self, pairing: Pairing, table_id: str, ratings: tuple[bytes, bytes]
    ) -> None:
        """Mark both seekers paired at the table (each with the other's rating), at once."""
        couple = (
            (pairing.first, pairing.second, ratings[1]),
            (pairing.second, pairing.first, ratings[0]),
        )
        with reachable():
            confirmed = await asyncio.gather(
                *(
                    self._confirm(
                        keys=[keys.seeker(player_id), keys.paired_table(player_id)],
                        args=[
                            table_id,
                            opponent,
                            opponent_rating,
                            pairing.kept_ms,
                            pairing.paired_kept_seconds,
                            keys.seeker_channel(player_id),
                            self._keys.publish_command,
                        ],
                    )
                    for player_id, opponent, opponent_rating in couple
                )
            )
        if not all(confirmed):
            # Only a hold settled for lost before its table was written is let go, and then
            # the table cannot be written: a seek found not held here is a bug.
            log.error("pairing at table %s: a seek was no longer held for it", table_id)

    async def settle(self, player_id: str, kept_ms: int, paired_kept_seconds: int) -> None:
        """Settle a hold on the player's seek that outlived its time (its pairer stopped):
        the pairing goes through if its table was written, else both seekers are let go."""
        with reachable():
            found = await self._redis.hmget(
                keys.seeker(player_id), ["reserved", "reserved_opponent", "pool"]
            )
        table_id, opponent, pool = (
            None if value is None else as_bytes(value).decode() for value in found
        )
        if table_id is None or opponent is None or pool is None:
            return
        kept = self._keys.table(table_id)
        with reachable():
            decided = await self._settle_table(
                keys=[kept.state, kept.void], args=[VOID_KEPT_SECONDS]
            )
        if as_bytes(decided) == b"void":
            await self._let_go([(player_id, b""), (opponent, b"")], table_id)
            return
        with reachable():
            async with self._redis.pipeline(transaction=False) as pipeline:
                pipeline.hget(keys.seeker(player_id), "rating")
                pipeline.hget(keys.seeker(opponent), "rating")
                ratings = [
                    b"" if value is None else as_bytes(value) for value in await pipeline.execute()
                ]
        pairing = Pairing(pool, player_id, opponent, kept_ms, paired_kept_seconds)
        await self._confirm_both(pairing, table_id, (ratings[0], ratings[1]))
        await self.leave_pool(pool, [player_id, opponent])

    async def enter_pool(self, pool: str, player_id: str, score: float, wait: bytes) -> None:
        """Put a seek in its pool (after its record: see ``lua/seek.lua``)."""
        with reachable():
            async with self._redis.pipeline(transaction=False) as pipeline:
                pipeline.zadd(pool, {player_id: score})
                pipeline.hset(keys.seek_pool_seekers(pool), player_id, wait)
                await pipeline.execute()

    async def leave_pool(self, pool: str, player_ids: list[str]) -> None:
        """Take seekers out of their pool's index."""
        with reachable():
            async with self._redis.pipeline(transaction=False) as pipeline:
                pipeline.zrem(pool, *player_ids)
                pipeline.hdel(keys.seek_pool_seekers(pool), *player_ids)
                await pipeline.execute()
