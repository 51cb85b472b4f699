"""``goti play`` survives a dropped connection (the tables server stops and comes back on its
port) and a restart of the client itself (it offers the unfinished game)."""

from __future__ import annotations

import goti_client
from goti_client.tables import TableStatus
from goti_client.terminal.app import GotiApp
from goti_client.terminal.dialogs import Question
from goti_client.terminal.player_files import PlayerFiles

from .pilot_moves import (
    SCREEN_SIZE,
    connected,
    game_screen,
    key_notation,
    my_turn,
    open_game,
    screen_text,
    shows,
    wait_until,
)
from .running_backend import Backend


async def test_the_game_goes_on_after_the_server_drops_the_connection(
    backend: Backend, player_files: PlayerFiles
) -> None:
    app = GotiApp(server=backend.target, files=player_files)
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        await connected(pilot)
        screen = await open_game(pilot, "#pass-and-play")
        await key_notation(pilot, screen, "11-15")

        await backend.stop_tables()
        await wait_until(pilot, lambda: not screen.connected, "the drop to be noticed")
        await wait_until(pilot, lambda: "reconnecting" in screen_text(app), "reconnecting shown")
        await backend.start_tables()
        await wait_until(pilot, lambda: screen.connected, "the connection to come back")
        await shows(pilot, "● connected")

        # The same table and position, and moves flow both ways again.
        assert screen.state.game.moves == ("11-15",)
        await key_notation(pilot, screen, "23-19")
        await key_notation(pilot, screen, "8-11")
        table = await app.goti.get_table(screen.table_id)
        assert table.game.moves == ("11-15", "23-19", "8-11")
        assert screen.state.seq == table.seq


async def test_a_restarted_client_offers_the_unfinished_game_and_resumes_it(
    backend: Backend, player_files: PlayerFiles
) -> None:
    first = GotiApp(server=backend.target, files=player_files)
    async with first.run_test(size=SCREEN_SIZE) as pilot:
        await connected(pilot)
        screen = await open_game(pilot, "#pass-and-play")
        await key_notation(pilot, screen, "10-14")
        await key_notation(pilot, screen, "22-18")
        table_id = screen.table_id
        player_id = first.goti.player.player_id if first.goti.player else None
    assert player_files.unfinished_table(backend.target) == table_id

    again = GotiApp(server=backend.target, files=player_files)
    async with again.run_test(size=SCREEN_SIZE) as pilot:
        await connected(pilot)
        # The same player, from the identity file.
        assert again.goti.player is not None
        assert again.goti.player.player_id == player_id
        await wait_until(pilot, lambda: isinstance(again.screen, Question), "the resume question")
        question = again.screen
        assert isinstance(question, Question)
        # Two plies, one of each side: the game is at its second move, as a record counts.
        assert question.question == (
            "You have an unfinished game (pass and play, at move 2). Resume it?"
        )
        await shows(pilot, "unfinished game")
        await pilot.press("y")
        screen = await game_screen(pilot, table_id)
        assert screen.state.game.moves == ("10-14", "22-18")
        assert screen.state.table.status is TableStatus.PLAYING
        await my_turn(pilot, screen)
        await key_notation(pilot, screen, "9-13")


async def test_a_client_restarted_after_declining_starts_fresh(
    backend: Backend, player_files: PlayerFiles
) -> None:
    first = GotiApp(server=backend.target, files=player_files)
    async with first.run_test(size=SCREEN_SIZE) as pilot:
        await connected(pilot)
        await open_game(pilot, "#pass-and-play")

    again = GotiApp(server=backend.target, files=player_files)
    async with again.run_test(size=SCREEN_SIZE) as pilot:
        await connected(pilot)
        await wait_until(pilot, lambda: isinstance(again.screen, Question), "the resume question")
        await pilot.press("n")
        await wait_until(pilot, lambda: not isinstance(again.screen, Question), "the answer")
    assert player_files.unfinished_table(backend.target) is None


async def test_an_unreachable_server_is_one_line_and_r_tries_again(
    backend: Backend, player_files: PlayerFiles
) -> None:
    # One call first: a tables server stopped while its timer worker is still opening its
    # first Redis connection takes a long while to stop.
    async with goti_client.connect(backend.target):
        pass
    await backend.stop_tables()
    app = GotiApp(server=backend.target, files=player_files)
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        shown = await shows(pilot, f"Cannot reach Goti at {backend.target}", "Press R to try again")
        assert "Traceback" not in shown
        await backend.start_tables()
        await pilot.press("r")
        await connected(pilot)
        await shows(pilot, "Playing as")
