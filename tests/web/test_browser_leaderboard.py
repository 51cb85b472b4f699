"""The leaderboard in a real browser against a real backend: two players with settled
ratings play a rated game through Play online now to its end, and the leaderboard one of them
then opens from the start screen lists both with their new ratings, as the server has them,
and says the player's own place."""

from __future__ import annotations

from typing import Any, Final

import pytest
from connectrpc.protocol import ProtocolType
from redis.asyncio import Redis

from goti.api.v1 import game_pb2, matchmaking_pb2, players_pb2
from goti.ratings import Rating
from goti.tables import keys
from goti.tables.rated_games import StoredRating, rating_field

from .conftest import WebBackend, run_scenario
from .test_web_api import browser_calls

pytestmark = [pytest.mark.usefixtures("browser"), pytest.mark.timeout(300)]

SETTLED: Final = {"Asha": 1580.0, "Bikash": 1560.0}
"""The players' ratings before the game: settled (deviation under 110) and close enough to
be paired at once."""
DEVIATION: Final = 80.0
GAMES_BEFORE: Final = 20


async def test_after_a_rated_game_the_leaderboard_lists_both_players_and_the_callers_place(
    web_backend: WebBackend, redis: Redis
) -> None:
    players: list[dict[str, Any]] = []
    async with browser_calls(web_backend, ProtocolType.CONNECT) as calls:
        for name, rating in SETTLED.items():
            guest = await calls.call(
                "CreateGuest", players_pb2.CreateGuestRequest(display_name=name)
            )
            player_id = guest.player.player_id
            stored = StoredRating(Rating(rating, DEVIATION, 0.06), GAMES_BEFORE)
            await redis.hset(
                keys.player(player_id), rating_field(game_pb2.VARIANT_ENGLISH), stored.encode()
            )
            players.append(
                {
                    "name": name,
                    "token": guest.player_token,
                    "playerId": player_id,
                    "rating": round(rating),
                    "games": GAMES_BEFORE,
                }
            )
        report = await run_scenario(web_backend, "seek_leaderboard", players=players)

        calls.token = players[0]["token"]
        board = await calls.call("GetLeaderboard", matchmaking_pb2.GetLeaderboardRequest())
    # The page showed both players, as the server ranks them after the game.
    assert [row["playerId"] for row in report["rows"]] == [
        entry.player.player_id for entry in board.entries
    ]
    assert sorted(row["name"] for row in report["rows"]) == ["Asha (you)", "Bikash"]
    assert {entry.rating.games for entry in board.entries} == {GAMES_BEFORE + 1}
    # The winner went up, the loser down: the ratings shown are the new ones.
    shown = {row["playerId"]: row["rating"] for row in report["rows"]}
    before = {player["playerId"]: player["rating"] for player in players}
    loser = players[0 if report["resigned"] == "first" else 1]["playerId"]
    winner = next(player_id for player_id in before if player_id != loser)
    assert shown[loser] < before[loser] and shown[winner] > before[winner]
    assert report["yourPlace"] == f"Your place: {board.you.rank}"
    assert board.you.player.player_id == players[0]["playerId"]
