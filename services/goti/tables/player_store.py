"""Players in Redis: each guest's hash (its token digest, name and streaks), the games
already counted in its streaks, and the rate-limit counters.

Apart from the tables (:mod:`goti.tables.store`) because nothing a player does is part of a
table's compare-and-set: a player's keys change on their own, each in one call or script.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from redis.asyncio import Redis

from goti.tables import keys
from goti.tables.redis_calls import as_bytes, flatten, lua_script, reachable

_HIT: Final = lua_script("hit")
_RECORD_RESULT: Final = lua_script("record_result")
_NEW_PLAYER: Final = lua_script("new_player")
_UPDATE_PLAYER: Final = lua_script("update_player")


@dataclass(frozen=True, slots=True)
class StoredPlayer:
    """A player as read."""

    player_id: str
    fields: Mapping[str, bytes] = field(default_factory=dict)


class PlayerStore:
    """Players and their counters in Redis."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._hit = redis.register_script(_HIT)
        self._record_result = redis.register_script(_RECORD_RESULT)
        self._new_player = redis.register_script(_NEW_PLAYER)
        self._update_player = redis.register_script(_UPDATE_PLAYER)

    async def create_player(
        self, player_id: str, fields: Mapping[str, bytes], *, keep_seconds: int = 0
    ) -> bool:
        """Store a new player, kept ``keep_seconds`` (0: forever); False if the id is taken."""
        with reachable():
            created = await self._new_player(
                keys=[keys.player(player_id)], args=[keep_seconds, *flatten(fields)]
            )
        return bool(created)

    async def player_token(self, player_id: str, *, keep_seconds: int) -> bytes | None:
        """A player's token digest (None if there is no such player), renewing the player's
        expiry to ``keep_seconds`` from now (0: kept forever) in the same round trip."""
        key = keys.player(player_id)
        with reachable():
            async with self._redis.pipeline(transaction=False) as pipeline:
                pipeline.hget(key, "token")
                if keep_seconds:
                    pipeline.expire(key, keep_seconds)
                else:
                    pipeline.persist(key)
                stored, _ = await pipeline.execute()
        return None if stored is None else as_bytes(stored)

    async def load_player(self, player_id: str) -> StoredPlayer | None:
        """A player's fields; None if there is no such player."""
        with reachable():
            raw = await self._redis.hgetall(keys.player(player_id))
        if not raw:
            return None
        return StoredPlayer(
            player_id, {as_bytes(name).decode(): as_bytes(value) for name, value in raw.items()}
        )

    async def update_player(self, player_id: str, fields: Mapping[str, bytes]) -> bool:
        """Write fields of an existing player; False if there is no such player."""
        with reachable():
            done = await self._update_player(keys=[keys.player(player_id)], args=flatten(fields))
        return bool(done)

    async def record_result(
        self, player_id: str, table_id: str, *, won: bool, remember_seconds: int
    ) -> None:
        """Count a finished game against the computer in the player's streaks, once."""
        with reachable():
            await self._record_result(
                keys=[keys.player(player_id), keys.player_results(player_id)],
                args=[table_id, "1" if won else "0", remember_seconds],
            )

    async def hit_rate_limit(self, key: str, limit: int, window_ms: int) -> int:
        """Count one action against ``limit`` per window: 0 when allowed, else the
        milliseconds until the window ends."""
        with reachable():
            return int(await self._hit(keys=[key], args=[limit, window_ms]))
