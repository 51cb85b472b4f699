"""``goti play``'s Play online now against a real backend: two terminals wait, are paired at
one table showing each other's name and rating, and see each other's first move; a wait
cancelled with Esc leaves the pool, and a seek from the SDK then pairs with the terminal's
next one; a player who left a paired game is offered to go back to it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from redis.asyncio import Redis
from textual.pilot import Pilot
from textual.widgets import Checkbox, RadioSet

import goti_client
from goti.api.v1 import game_pb2, matchmaking_pb2
from goti.rules import ENGLISH, Color
from goti.tables import keys
from goti_client import MovePlayed, Rating, SeekPaired, SeekWaiting, Snapshot
from goti_client.tables import Role, TableStatus
from goti_client.terminal.app import GotiApp
from goti_client.terminal.dialogs import Question
from goti_client.terminal.game_screen import GameScreen
from goti_client.terminal.seek_screen import SeekScreen

from .pilot_moves import (
    SCREEN_SIZE,
    WAIT_SECONDS,
    connected,
    files_in,
    game_screen,
    key_move,
    my_turn,
    shows,
    wait_until,
)
from .running_backend import Backend

CASUAL_30_SECONDS = keys.seek_pool(
    game_pb2.VARIANT_ENGLISH, matchmaking_pb2.SEEK_TIMER_30_SECONDS, False
)


def name_of(app: GotiApp) -> str:
    assert app.me is not None
    return app.me.player.display_name


async def test_two_terminals_are_paired_and_each_sees_the_others_first_move(
    backend: Backend, tmp_path: Path
) -> None:
    first = GotiApp(server=backend.target, files=files_in(tmp_path, "first"))
    second = GotiApp(server=backend.target, files=files_in(tmp_path, "second"))
    async with first.run_test(size=SCREEN_SIZE) as first_pilot:
        await connected(first_pilot)
        await first_pilot.click("#seek")  # English, no timer, rated: the defaults
        await wait_until(first_pilot, lambda: isinstance(first.screen, SeekScreen), "the wait")
        await shows(
            first_pilot,
            "Looking for an opponent · English draughts · None · rated",
            "Players waiting: 1",
            "Opponents rated 1400 to 1600",
            "Your rating: 1500?",
            "Waited 0:0",
            "Esc cancels",
        )

        async with second.run_test(size=SCREEN_SIZE) as second_pilot:
            await connected(second_pilot)
            await second_pilot.click("#seek")
            first_screen = await game_screen(first_pilot)
            second_screen = await game_screen(second_pilot, first_screen.table_id)
            table = first_screen.state.table
            assert table.rated and table.status is TableStatus.PLAYING
            roles = {first_screen.state.table.role, second_screen.state.table.role}
            assert roles == {Role.WHITE, Role.BLACK}
            # Each sees the other's name with the rating, and that the game is rated.
            await shows(first_pilot, f"{name_of(second)} (1500?)", "· rated")
            await shows(second_pilot, f"{name_of(first)} (1500?)", "· rated")

            black, white = (
                ((first_pilot, first_screen), (second_pilot, second_screen))
                if first_screen.state.table.role is Role.BLACK
                else ((second_pilot, second_screen), (first_pilot, first_screen))
            )
            assert white[1].state.seat_at_bottom is Color.WHITE
            await key_move(*black, (11, 15))
            await wait_until(white[0], lambda: white[1].state.game.moves == ("11-15",), "11-15")
            await my_turn(*white)
            await shows(white[0], "Your move")

            # White resigns the rated game: back on the start screen, both players' new
            # ratings stand beside their names.
            await white[0].press("r")
            await wait_until(white[0], lambda: isinstance(white[0].app.screen, Question), "ask")
            await white[0].press("y")
            white_rating = await rating_after_the_game(*white)
            black_rating = await rating_after_the_game(*black)
            assert white_rating.rating < 1500 < black_rating.rating
            assert white_rating.games == black_rating.games == 1


async def rating_after_the_game(pilot: Pilot[Any], screen: GameScreen) -> Rating:
    """Wait for the game's end, leave the table, and wait for the player's new rating on the
    start screen."""
    app = pilot.app
    assert isinstance(app, GotiApp)
    await wait_until(pilot, lambda: screen.state.game.is_over, "the game's end")
    await pilot.press("q")
    await wait_until(pilot, lambda: app.screen is app.start_screen, "the start screen")

    def rating() -> Rating | None:
        return app.me.rating(ENGLISH) if app.me is not None else None

    await wait_until(pilot, lambda: rating() is not None, "the new rating")
    shown = rating()
    assert shown is not None
    await shows(pilot, f"Your rating: English draughts ({shown})")
    return shown


async def test_an_esc_cancelled_wait_leaves_the_pool_and_the_next_pairs_with_the_sdk(
    backend: Backend, tmp_path: Path, redis: Redis
) -> None:
    app = GotiApp(server=backend.target, files=files_in(tmp_path, "player"))
    async with (
        app.run_test(size=SCREEN_SIZE) as pilot,
        goti_client.connect(backend.target, display_name="Sam") as sam,
    ):
        await connected(pilot)
        assert app.me is not None
        player_id = app.me.player.player_id
        await pilot.click("#seek-timer-30")
        await pilot.click("#rated")  # casual
        start = app.start_screen
        await wait_until(
            pilot,
            lambda: (
                start.query_one("#seek-timer", RadioSet).pressed_index == 1
                and not start.query_one("#rated", Checkbox).value
            ),
            "30 s and casual chosen",
        )
        await pilot.click("#seek")
        await shows(pilot, "· 30 s · casual", "Players waiting: 1")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.start_screen, "the start screen")
        await shows(pilot, "Search cancelled")
        # The start screen comes back only once the server has the seek out of its pool.
        assert await redis.zscore(CASUAL_30_SECONDS, player_id) is None

        async with sam.seek(ENGLISH, turn_timer=30, rated=False) as seek:
            progress: list[SeekWaiting | SeekPaired] = []

            async def follow() -> None:
                async for update in seek:
                    progress.append(update)

            following = asyncio.create_task(follow())
            await wait_until(pilot, lambda: bool(progress), "Sam's wait")
            assert isinstance(progress[0], SeekWaiting) and progress[0].seekers_in_pool == 1
            await pilot.click("#seek")
            screen = await game_screen(pilot)
            await asyncio.wait_for(following, WAIT_SECONDS)
        paired = progress[-1]
        assert isinstance(paired, SeekPaired) and paired.table.table_id == screen.table_id
        assert paired.opponent.player_id == player_id
        await shows(pilot, "Sam (1500?)")
        await first_move_seen_across(pilot, screen, sam, paired)

        # Left, the game is still there: a new seek offers to go back to it.
        await pilot.press("q")
        await wait_until(pilot, lambda: app.screen is app.start_screen, "the start screen")
        await pilot.click("#seek")
        await wait_until(pilot, lambda: isinstance(app.screen, Question), "the offer")
        await shows(pilot, "You have a game to finish. Go back to it?")
        await pilot.press("y")
        back = await game_screen(pilot, screen.table_id)
        assert len(back.state.game.moves) == 1


async def first_move_seen_across(
    pilot: Pilot[Any], screen: GameScreen, sam: goti_client.GotiClient, paired: SeekPaired
) -> None:
    """Whoever plays Black moves first (Sam through the SDK, or the terminal's player with the
    keyboard); the other side sees the move."""
    table_id = paired.table.table_id
    if paired.table.role is Role.BLACK:
        await sam.play(table_id, "11-15")
        await wait_until(pilot, lambda: screen.state.game.moves == ("11-15",), "Sam's move")
        return
    watch = sam.watch(table_id, after_seq=paired.table.seq)
    try:
        await key_move(pilot, screen, (11, 15))

        async def seen() -> None:
            # A watch from seq 0 starts with a snapshot, holding a move played before it.
            async for update in watch:
                if isinstance(update, Snapshot) and update.table.game.moves == ("11-15",):
                    return
                if isinstance(update, MovePlayed):
                    assert update.notation == "11-15"
                    return

        await asyncio.wait_for(seen(), WAIT_SECONDS)
    finally:
        await watch.aclose()
