"""The leaderboards: per variant, the players whose rating is no longer provisional, best
first, and the caller's own place.

Each variant's board is a sorted set kept by the script that counts a rated game
(:meth:`~goti.tables.player_store.PlayerStore.rate_game`): a player joins it once the
rating's deviation falls under the provisional threshold.  A guest removed after its idle
days leaves its entry behind; reading the board finds such entries (their hash is gone),
drops them and reads on, so the top places are always players that exist.
"""

from __future__ import annotations

from typing import Final

from goti.api.v1 import matchmaking_pb2, players_pb2
from goti.tables.player_store import PlayerStore
from goti.tables.rated_games import rating_message

TOP_PLACES: Final = 100
"""How many places a leaderboard shows."""
_READS: Final = 4
"""Reads of the board's top before settling for fewer places (each read drops the entries
of players that are gone, so this bounds the work a burst of removed guests can cause)."""


class Leaderboard:
    """Reads the variants' leaderboards."""

    def __init__(self, store: PlayerStore) -> None:
        self._store = store

    async def board(
        self, variant: int, caller: str | None
    ) -> matchmaking_pb2.GetLeaderboardResponse:
        """The top places of ``variant``'s board and, with a ``caller``, the caller's own."""
        response = matchmaking_pb2.GetLeaderboardResponse()
        for _ in range(_READS):
            ranked = await self._store.leaderboard_top(variant, TOP_PLACES)
            found = await self._store.names_and_ratings(ranked, variant)
            gone = [player_id for player_id, kept in zip(ranked, found, strict=True) if not kept]
            if not gone:
                break
            await self._store.drop_from_leaderboard(variant, gone)
        for player_id, kept in zip(ranked, found, strict=True):
            if kept is None:
                continue  # still gone after the last read: left out, the places close up
            name, stored = kept
            response.entries.append(
                matchmaking_pb2.LeaderboardEntry(
                    rank=len(response.entries) + 1,
                    player=players_pb2.Player(player_id=player_id, display_name=name),
                    rating=rating_message(variant, stored),
                )
            )
        if caller is not None:
            you = await self._place_of(variant, caller)
            if you is not None:
                response.you.CopyFrom(you)
        return response

    async def _place_of(
        self, variant: int, player_id: str
    ) -> matchmaking_pb2.LeaderboardEntry | None:
        rank = await self._store.leaderboard_rank(variant, player_id)
        if rank is None:
            return None
        (kept,) = await self._store.names_and_ratings([player_id], variant)
        if kept is None:
            return None
        name, stored = kept
        return matchmaking_pb2.LeaderboardEntry(
            rank=rank + 1,
            player=players_pb2.Player(player_id=player_id, display_name=name),
            rating=rating_message(variant, stored),
        )
