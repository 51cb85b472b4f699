"""Every Redis key and channel Goti uses, in one place.

All start with ``goti:``.  A table's keys share the hash tag ``{t:<id>}`` so they live in one
Redis Cluster slot and one Lua script can change them together; a player's keys share
``{p:<id>}``.  The lobby and the timers are single, global keys.
"""

from __future__ import annotations

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
