"""Players in Redis: each guest's hash (its token digest, name, streaks and ratings), the
games already counted in its streaks and ratings, the leaderboards, and the rate-limit
counters.

Apart from the tables (:mod:`goti.tables.store`) because nothing a player does is part of a
table's compare-and-set: a player's keys change on their own, each in one call or script.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, cast

from goti.tables import keys
from goti.tables.keys import KeySpace
from goti.tables.rated_games import StoredRating, leaderboard_score, rating_field, variant_name
from goti.tables.redis_calls import RedisClient, as_bytes, flatten, lua_script, reachable

_HIT: Final = lua_script("hit")
_RECORD_RESULT: Final = lua_script("record_result")
_NEW_PLAYER: Final = lua_script("new_player")
_UPDATE_PLAYER: Final = lua_script("update_player")
_RATE_GAME: Final = lua_script("rate_game")
_RATE_PLAYER: Final = lua_script("rate_player")
_RELEASE_TIMER: Final = lua_script("release")


class RatedGameOutcome(enum.Enum):
    """What :meth:`PlayerStore.rate_game` did."""

    COUNTED = 1
    """Both ratings written, the game marked counted."""
    COUNTED_BEFORE = 0
    """The game was counted before: nothing written."""
    MOVED = -1
    """A rating changed since it was read: nothing written; read again and retry."""


@dataclass(frozen=True, slots=True)
class GameRatings:
    """A rated game's two players, their ratings as read and as the game leaves them."""

    table_id: str
    variant: int
    player_ids: tuple[str, str]
    """White's, then Black's."""
    before: tuple[bytes, bytes]
    """The rating fields as read (empty for none), compared before anything is written."""
    after: tuple[StoredRating, StoredRating]


@dataclass(frozen=True, slots=True)
class StoredPlayer:
    """A player as read."""

    player_id: str
    fields: Mapping[str, bytes] = field(default_factory=dict)


class PlayerStore:
    """Players and their counters in Redis."""

    def __init__(self, redis: RedisClient, keyspace: KeySpace | None = None) -> None:
        self._redis = redis
        self._keys = keyspace or KeySpace()
        self._rate_player = redis.register_script(_RATE_PLAYER)
        self._release_timer = redis.register_script(_RELEASE_TIMER)
        self._hit = redis.register_script(_HIT)
        self._record_result = redis.register_script(_RECORD_RESULT)
        self._new_player = redis.register_script(_NEW_PLAYER)
        self._update_player = redis.register_script(_UPDATE_PLAYER)
        self._rate_game = redis.register_script(_RATE_GAME)

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

    # -- ratings --------------------------------------------------------------------------

    async def rating_fields(self, player_ids: Sequence[str], variant: int) -> list[bytes]:
        """The players' rating fields in ``variant`` as kept (empty for none), one round trip."""
        with reachable():
            async with self._redis.pipeline(transaction=False) as pipeline:
                for player_id in player_ids:
                    pipeline.hget(keys.player(player_id), rating_field(variant))
                values = await pipeline.execute()
        return [b"" if value is None else as_bytes(value) for value in values]

    async def rate_game(
        self,
        game: GameRatings,
        *,
        remember_seconds: int,
        lease_until_ms: int | None,
        now_ms: int,
    ) -> RatedGameOutcome:
        """Write a rated game's new ratings, update the leaderboard and mark the game counted,
        all at once and only if the game was not counted before and neither rating moved since
        it was read; then drop the game's timer entry held until ``lease_until_ms``."""
        if self._keys.cluster:
            return await self._rate_in_steps(
                game,
                remember_seconds=remember_seconds,
                lease_until_ms=lease_until_ms,
                now_ms=now_ms,
            )
        white, black = game.player_ids
        scores = [_leaderboard_arg(stored) for stored in game.after]
        with reachable():
            done = await self._rate_game(
                keys=[
                    keys.player(white),
                    keys.player(black),
                    keys.player_rated_games(white),
                    keys.player_rated_games(black),
                    keys.leaderboard(variant_name(game.variant)),
                    keys.TIMERS,
                ],
                args=[
                    game.table_id,
                    rating_field(game.variant),
                    *game.before,
                    *(stored.encode() for stored in game.after),
                    *scores,
                    remember_seconds,
                    "" if lease_until_ms is None else lease_until_ms,
                    white,
                    black,
                    now_ms,
                ],
            )
        return RatedGameOutcome(int(done))

    async def _rate_in_steps(
        self,
        game: GameRatings,
        *,
        remember_seconds: int,
        lease_until_ms: int | None,
        now_ms: int,
    ) -> RatedGameOutcome:
        """:meth:`rate_game` on a Redis Cluster, where the two players, the leaderboard and
        the game's timer entry are in four slots: one step each, every one safe to repeat.

        Each player's rating is written with its own compare (``lua/rate_player.lua``),
        then the leaderboard is given the score of every player this game counts in, and
        the timer entry, kept until here as the safety net, is dropped last: a replica that
        stops midway leaves the entry, and the replica that claims it next does the rest
        (the players counted before are skipped, and their place on the board set from
        the rating they have).  A rating that moved meanwhile (MOVED) is read again by the
        caller, and only that player's side written; the other's rating is by then the one
        this game left, which a replica stopping midway, or a second rated game of one
        player ending in the same moment, alone can cause.
        """
        field = rating_field(game.variant)
        done = []
        with reachable():
            for index, player_id in enumerate(game.player_ids):
                outcome = await self._rate_player(
                    keys=[keys.player(player_id), keys.player_rated_games(player_id)],
                    args=[
                        game.table_id,
                        field,
                        game.before[index],
                        game.after[index].encode(),
                        remember_seconds,
                        now_ms,
                    ],
                )
                done.append(RatedGameOutcome(int(outcome)))
        await self._place_on_leaderboard(game, done)
        if RatedGameOutcome.MOVED in done:
            return RatedGameOutcome.MOVED
        if lease_until_ms is not None:
            with reachable():
                await self._release_timer(
                    keys=[self._keys.table(game.table_id).shard.timers],
                    args=[game.table_id, lease_until_ms, ""],
                )
        if RatedGameOutcome.COUNTED in done:
            return RatedGameOutcome.COUNTED
        return RatedGameOutcome.COUNTED_BEFORE

    async def _place_on_leaderboard(
        self, game: GameRatings, done: Sequence[RatedGameOutcome]
    ) -> None:
        """Give the leaderboard the score of each player the game counts in: the new one, or
        for a player counted before, the one their rating has now."""
        counted_before = [
            player_id
            for player_id, outcome in zip(game.player_ids, done, strict=True)
            if outcome is RatedGameOutcome.COUNTED_BEFORE
        ]
        now_kept = dict(
            zip(
                counted_before,
                await self.rating_fields(counted_before, game.variant) if counted_before else [],
                strict=True,
            )
        )
        board = keys.leaderboard(variant_name(game.variant))
        with reachable():
            for index, player_id in enumerate(game.player_ids):
                if done[index] is RatedGameOutcome.MOVED:
                    continue
                if done[index] is RatedGameOutcome.COUNTED:
                    stored = game.after[index]
                elif now_kept.get(player_id):
                    stored = StoredRating.decode(now_kept[player_id])
                else:
                    continue  # no rating kept: the player is gone
                score = leaderboard_score(stored)
                if score is None:
                    await self._redis.zrem(board, player_id)
                else:
                    await self._redis.zadd(board, {player_id: score})

    async def leaderboard_top(self, variant: int, count: int) -> list[str]:
        """The ids of the ``count`` best-rated players on the variant's leaderboard, best first."""
        with reachable():
            found = await self._redis.zrevrange(
                keys.leaderboard(variant_name(variant)), 0, count - 1
            )
        return [as_bytes(player_id).decode() for player_id in found]

    async def leaderboard_rank(self, variant: int, player_id: str) -> int | None:
        """The player's place on the variant's leaderboard counting from 0; None when absent."""
        with reachable():
            rank = await self._redis.zrevrank(keys.leaderboard(variant_name(variant)), player_id)
        return None if rank is None else int(cast(int, rank))

    async def names_and_ratings(
        self, player_ids: Sequence[str], variant: int
    ) -> list[tuple[str, StoredRating] | None]:
        """Each player's name and rating in ``variant``; None for a player that is gone."""
        with reachable():
            async with self._redis.pipeline(transaction=False) as pipeline:
                for player_id in player_ids:
                    pipeline.hmget(keys.player(player_id), ["name", rating_field(variant)])
                replies = await pipeline.execute()
        found: list[tuple[str, StoredRating] | None] = []
        for name, value in replies:
            if name is None:
                found.append(None)
            else:
                kept = None if value is None else as_bytes(value)
                found.append((as_bytes(name).decode(), StoredRating.decode(kept)))
        return found

    async def drop_from_leaderboard(self, variant: int, player_ids: Sequence[str]) -> None:
        """Take players off the variant's leaderboard (players that are gone)."""
        if player_ids:
            with reachable():
                await self._redis.zrem(keys.leaderboard(variant_name(variant)), *player_ids)


def _leaderboard_arg(stored: StoredRating) -> str:
    """A player's leaderboard score as the rating script takes it ('' to leave them off)."""
    score = leaderboard_score(stored)
    return "" if score is None else repr(score)
