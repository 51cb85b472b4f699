"""Watching a table by what its players' screens show: its code as typed, or its join link; and
a join refused because the table is full turning into watching it.  Each follows the watcher
past the switch to the next move played at the table."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input

import goti_client
from goti_client.tables import Opponent, Role, Table, TableStatus
from goti_client.terminal.app import GotiApp
from goti_client.terminal.dialogs import Question
from goti_client.terminal.game_screen import GameScreen

from .pilot_moves import (
    SCREEN_SIZE,
    connected,
    files_in,
    game_screen,
    screen_text,
    shows,
    wait_until,
)
from .running_backend import Backend


@dataclass
class SeatedTable:
    """A table two players (SDK clients) sit at, Black to move."""

    table: Table
    black: goti_client.GotiClient

    async def play(self, notation: str) -> None:
        """Black plays ``notation``, as of the table now (the host has not seen the join)."""
        now = await self.black.get_table(self.table.table_id)
        await self.black.play(self.table.table_id, notation, expected_seq=now.seq)


@contextlib.asynccontextmanager
async def a_full_table(backend: Backend, folder: Path) -> AsyncIterator[SeatedTable]:
    """A table between two people, both seats taken, no move played yet."""
    async with (
        goti_client.connect(backend.target, identity_file=folder / "host.json") as host,
        goti_client.connect(backend.target, identity_file=folder / "guest.json") as guest,
    ):
        table = await host.create_table(opponent=Opponent.HUMAN)
        joined = await guest.join_table(table.code)
        assert joined.status is TableStatus.PLAYING
        black = host if table.role is Role.BLACK else guest
        yield SeatedTable(joined, black)


async def watch_by(pilot: Pilot[Any], app: GotiApp, typed: str) -> GameScreen:
    """Type ``typed`` in the Watch field, press Enter, and wait for the table."""
    await pilot.click("#watch-id")
    field = app.screen.query_one("#watch-id", Input)
    field.value = typed
    await pilot.press("enter")
    return await game_screen(pilot)


async def shows_watching(pilot: Pilot[Any], app: GotiApp) -> None:
    """Wait until the screen says the table is being watched."""
    await wait_until(pilot, lambda: "Watching" in screen_text(app), "Watching in the header")


async def shows_moves(
    pilot: Pilot[Any], app: GotiApp, screen: GameScreen, moves: tuple[str, ...]
) -> None:
    """Wait until the watcher's screen has folded in and shows ``moves``."""
    await wait_until(
        pilot,
        lambda: screen.state.game.moves == moves and moves[-1] in screen_text(app),
        f"the moves {moves} on the watcher's screen",
    )


async def test_a_table_watched_by_its_code_and_by_its_join_link_shows_the_next_move(
    backend: Backend, tmp_path: Path
) -> None:
    async with a_full_table(backend, tmp_path) as seated:
        table = seated.table
        by_code = GotiApp(server=backend.target, files=files_in(tmp_path, "by-code"))
        by_link = GotiApp(server=backend.target, files=files_in(tmp_path, "by-link"))
        async with (
            by_code.run_test(size=SCREEN_SIZE) as code_pilot,
            by_link.run_test(size=SCREEN_SIZE) as link_pilot,
        ):
            await connected(code_pilot)
            await connected(link_pilot)
            # As a person reads it off a friend's screen: lower case, with a dash.
            typed_code = f"{table.code[:3]}-{table.code[3:]}".lower()
            watching_code = await watch_by(code_pilot, by_code, typed_code)
            watching_link = await watch_by(link_pilot, by_link, table.join_url)
            watchers = (
                (code_pilot, by_code, watching_code),
                (link_pilot, by_link, watching_link),
            )
            for pilot, app, screen in watchers:
                assert screen.table_id == table.table_id
                assert screen.state.table.role is Role.SPECTATOR
                await shows_watching(pilot, app)

            await seated.play("11-15")
            for pilot, app, screen in watchers:
                await shows_moves(pilot, app, screen, ("11-15",))


async def test_joining_a_full_table_offers_to_watch_it_and_watching_shows_the_next_move(
    backend: Backend, tmp_path: Path
) -> None:
    async with a_full_table(backend, tmp_path) as seated:
        table = seated.table
        app = GotiApp(server=backend.target, files=files_in(tmp_path, "third"))
        async with app.run_test(size=SCREEN_SIZE) as pilot:
            await connected(pilot)
            await pilot.click("#join-code")
            await pilot.press(*table.code, "enter")
            await wait_until(pilot, lambda: isinstance(app.screen, Question), "the offer")
            question = app.screen
            assert isinstance(question, Question)
            assert question.question == (
                "That table is full: both seats are taken. Watch it instead?"
            )
            await pilot.click("#yes")
            watching = await game_screen(pilot, table.table_id)
            assert watching.state.table.role is Role.SPECTATOR
            # Nobody was seated or remembered: the game is the players', not the watcher's.
            assert app.files.unfinished_table(backend.target) is None

            await seated.play("9-13")
            await shows_moves(pilot, app, watching, ("9-13",))


async def test_declining_to_watch_a_full_table_stays_on_the_start_screen(
    backend: Backend, tmp_path: Path
) -> None:
    async with a_full_table(backend, tmp_path) as seated:
        app = GotiApp(server=backend.target, files=files_in(tmp_path, "third"))
        async with app.run_test(size=SCREEN_SIZE) as pilot:
            await connected(pilot)
            await pilot.click("#join-code")
            await pilot.press(*seated.table.code, "enter")
            await wait_until(pilot, lambda: isinstance(app.screen, Question), "the offer")
            await pilot.press("n")
            await wait_until(pilot, lambda: app.screen is app.start_screen, "the start screen")
            await shows(pilot, "That table is full")
