"""Every Redis key and channel Goti uses, in one place.

All start with ``goti:``.  A player's keys share the hash tag ``{p:<id>}``, so that they live
in one Redis Cluster slot and one Lua script can change them together.

Where the tables live depends on the deployment (:class:`KeySpace`).  On one Redis (or a
primary under Sentinel) a table's keys share ``{t:<id>}`` and the lobby and the timers are
single, global keys: the functions and names of this module.  On a Redis Cluster every
script must keep to one slot, so the tables are split into a fixed number of shards
(``GOTI_REDIS_SHARDS``), each one hash tag: a table's keys, its join code, and its entries in
the timers and the lobby all sit under its shard's tag, and each shard has timers, a lobby
and a lobby channel of its own, which every replica reads all of.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from itertools import count
from typing import Final

from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot

PREFIX = "goti:"

TIMERS = f"{PREFIX}timers"
"""Sorted set: table id -> when (ms since the epoch) the table next needs the server to act
(a computer move, a turn timer running out)."""

LOBBY = f"{PREFIX}lobby"
"""Sorted set: open public table id -> when it opened (ms)."""

LOBBY_LISTINGS = f"{PREFIX}lobby:listings"
"""Hash: open public table id -> its lobby listing (protobuf bytes)."""

LOBBY_CHANNEL = f"{PREFIX}lobby:changes"
"""Pub/sub: each lobby change (protobuf bytes)."""

IDLE_CHANNEL = f"{PREFIX}idle"
"""Pub/sub: never carries anything; a pub/sub connection with nothing else to listen to
subscribes to it, so that it has something to read."""


def table_state(table_id: str) -> str:
    """Hash: the table (``seq``, ``log_first``, and the service's own fields)."""
    return f"{PREFIX}{{t:{table_id}}}:state"


def table_log(table_id: str) -> str:
    """List: the table's events in ``seq`` order, from ``log_first`` on."""
    return f"{PREFIX}{{t:{table_id}}}:log"


def table_requests(table_id: str) -> str:
    """List: the table's latest commands (request digest, fingerprint, the seqs they
    produced), newest last, for idempotent retries."""
    return f"{PREFIX}{{t:{table_id}}}:requests"


def table_channel(table_id: str) -> str:
    """Pub/sub: each new event of the table, as stored in the log."""
    return f"{PREFIX}{{t:{table_id}}}:events"


def table_code(code: str) -> str:
    """String: a table's join code -> the table id."""
    return f"{PREFIX}code:{code}"


def player(player_id: str) -> str:
    """Hash: a player (token digest, name, streaks...)."""
    return f"{PREFIX}{{p:{player_id}}}:player"


def player_results(player_id: str) -> str:
    """Set: the finished games against the computer already counted in the player's streaks."""
    return f"{PREFIX}{{p:{player_id}}}:results"


def player_request(player_id: str, request_id: str) -> str:
    """String: the table a player's CreateTable request made, for idempotent retries."""
    return f"{PREFIX}{{p:{player_id}}}:request:{request_id}"


def player_rated_games(player_id: str) -> str:
    """Sorted set: the rated games already counted in the player's ratings (table id ->
    when it was last asked about, ms), as long as their tables could ask again."""
    return f"{PREFIX}{{p:{player_id}}}:rated"


def leaderboard(variant_name: str) -> str:
    """Sorted set: player id -> rating, for the players of a variant (``english``,
    ``russian``) whose rating is no longer provisional."""
    return f"{PREFIX}leaderboard:{variant_name}"


def rate_limit(player_id: str, action: str) -> str:
    """String counter: how often a player did ``action`` in the current window."""
    return f"{PREFIX}{{p:{player_id}}}:rate:{action}"


def address_rate_limit(address: str, action: str) -> str:
    """String counter: how often a client address did ``action`` in the current window."""
    return f"{PREFIX}rate:{action}:{address}"


def seek_pool(variant: int, timer: int, rated: bool) -> str:
    """Sorted set: the players waiting in one pool (a variant, a ``SeekTimer`` and rated or
    casual) -> their rating."""
    return f"{PREFIX}pool:{variant}:{timer}:{'rated' if rated else 'casual'}"


def seek_pool_seekers(pool: str) -> str:
    """Hash: a pool's waiting player id -> when its wait began (ms), its last opponent and
    the seat it takes when paired (a ``Seat`` message), space-separated."""
    return f"{pool}:seekers"


def seek_pool_lease(pool: str) -> str:
    """String: the replica pairing the pool now, until the key expires."""
    return f"{pool}:lease"


def seeker(player_id: str) -> str:
    """Hash: a player's seek (request id, pool, rating, when it began, waiting / left /
    paired and the table), kept a few seconds after its stream ends, so that it resumes."""
    return f"{PREFIX}{{p:{player_id}}}:seek"


def seeker_channel(player_id: str) -> str:
    """Pub/sub: wakes the player's seek stream when it is paired."""
    return f"{PREFIX}{{p:{player_id}}}:seek:wake"


def paired_table(player_id: str) -> str:
    """Hash: the table the player's last seek paired them at, and the opponent there."""
    return f"{PREFIX}{{p:{player_id}}}:paired"


@dataclass(frozen=True, slots=True)
class Shard:
    """One shard of the tables: its timers, its lobby and the lobby's channel."""

    index: int
    timers: str
    lobby: str
    lobby_listings: str
    lobby_channel: str


@dataclass(frozen=True, slots=True)
class TableKeys:
    """One table's keys and channel, and the shard whose indexes list it."""

    shard: Shard
    state: str
    log: str
    requests: str
    channel: str
    void: str
    """String: marks a table id a pairing gave up (on a Redis Cluster, where a pairing is
    several steps), so that the table cannot be written under it any more."""


ONE_REDIS_SHARD: Final = Shard(0, TIMERS, LOBBY, LOBBY_LISTINGS, LOBBY_CHANNEL)


class KeySpace:
    """Where one deployment keeps its tables: one shard under this module's names (one
    Redis), or ``shards`` shards, each under a hash tag of its own (a Redis Cluster).

    A table's shard follows from its id, and a join code's from the code, so that any
    replica finds both; a table is given a code of its own shard (:meth:`code_fits`), so
    that the code's key shares the table's slot.  The shards' tags are chosen so that their
    slots lie evenly over the 16,384 (shard ``k`` of ``n`` in the ``k``-th ``n``-th of
    them), so the shards spread evenly over primaries that each serve a range of slots, as
    ``redis-cli --cluster create`` and ``rebalance`` leave them.

    The number of shards is fixed while any table exists: another number would look for
    every table in another shard.
    """

    def __init__(self, shards: int = 1, *, cluster: bool = False) -> None:
        if shards < 1 or (shards > 1 and not cluster):
            raise ValueError("one Redis has one shard; a cluster 1 or more")
        self.cluster = cluster
        if cluster:
            self._prefixes = tuple(f"{PREFIX}{{{tag}}}:" for tag in spread_tags(shards))
            self.shards = tuple(
                Shard(
                    index,
                    f"{prefix}timers",
                    f"{prefix}lobby",
                    f"{prefix}lobby:listings",
                    f"{prefix}lobby:changes",
                )
                for index, prefix in enumerate(self._prefixes)
            )
        else:
            self._prefixes = ()
            self.shards = (ONE_REDIS_SHARD,)

    @property
    def publish_command(self) -> str:
        """How scripts publish: sharded pub/sub on a cluster (a channel is then served by
        the node of its slot alone), classic pub/sub on one Redis (which may be 6.2)."""
        return "SPUBLISH" if self.cluster else "PUBLISH"

    def _shard_index(self, text: str) -> int:
        return zlib.crc32(text.encode()) % len(self.shards)

    def shard_of(self, table_id: str) -> Shard:
        """The shard of a table."""
        return self.shards[self._shard_index(table_id)]

    def table(self, table_id: str) -> TableKeys:
        """A table's keys and channel."""
        if not self.cluster:
            return TableKeys(
                ONE_REDIS_SHARD,
                table_state(table_id),
                table_log(table_id),
                table_requests(table_id),
                table_channel(table_id),
                f"{PREFIX}{{t:{table_id}}}:void",
            )
        index = self._shard_index(table_id)
        prefix = f"{self._prefixes[index]}t:{table_id}"
        return TableKeys(
            self.shards[index],
            f"{prefix}:state",
            f"{prefix}:log",
            f"{prefix}:requests",
            f"{prefix}:events",
            f"{prefix}:void",
        )

    def code(self, code: str) -> str:
        """String: a table's join code -> the table id, in the code's shard."""
        if not self.cluster:
            return table_code(code)
        return f"{self._prefixes[self._shard_index(code)]}code:{code}"

    def code_fits(self, table_id: str, code: str) -> bool:
        """Whether a code's key lives in the table's shard (a table takes only such a code,
        one in ``len(shards)`` of them)."""
        return self._shard_index(code) == self._shard_index(table_id)

    def code_for(self, table_id: str, draw: Callable[[], str]) -> str:
        """The first code ``draw`` gives that fits the table's shard (one draw in as many as
        there are shards)."""
        while True:
            code = draw()
            if self.code_fits(table_id, code):
                return code

    def pool(self, one_redis_key: str) -> str:
        """A pool's sorted set, named by its key on one Redis (:func:`seek_pool`); on a
        cluster the pool's keys (its seekers, its lease) share a hash tag of its own, so
        that they stay in one slot: ``goti:{pool:1:0:rated}``."""
        if not self.cluster or one_redis_key.startswith(f"{PREFIX}{{"):
            return one_redis_key
        return f"{PREFIX}{{{one_redis_key.removeprefix(PREFIX)}}}"


@functools.cache
def spread_tags(shards: int) -> tuple[str, ...]:
    """Hash tags for ``shards`` shards, the ``k``-th in the ``k``-th ``shards``-th of the
    cluster's slots: the first of ``g0``, ``g1``, ... to fall into each."""
    found: dict[int, str] = {}
    for number in count():
        tag = f"g{number}"
        part = key_slot(tag.encode()) * shards // REDIS_CLUSTER_HASH_SLOTS
        found.setdefault(part, tag)
        if len(found) == shards:
            return tuple(found[part] for part in range(shards))
    raise AssertionError("unreachable")
