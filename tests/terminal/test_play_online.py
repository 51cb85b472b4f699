"""``goti play`` headless against a real backend, two players at two terminals: a table
created and joined by its code, one joined from the live lobby, and a spectator."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Input

from goti.rules import Color
from goti_client.tables import Role, TableStatus
from goti_client.terminal.app import GotiApp
from goti_client.terminal.lobby_screen import LobbyScreen

from .pilot_moves import (
    SCREEN_SIZE,
    connected,
    files_in,
    game_screen,
    key_move,
    my_turn,
    open_game,
    screen_text,
    shows,
    wait_until,
)
from .running_backend import Backend


async def test_a_friend_joins_by_the_code_and_both_see_each_move(
    backend: Backend, tmp_path: Path
) -> None:
    host = GotiApp(server=backend.target, files=files_in(tmp_path, "host"))
    guest = GotiApp(server=backend.target, files=files_in(tmp_path, "guest"))
    async with host.run_test(size=SCREEN_SIZE) as host_pilot:
        await connected(host_pilot)
        host_screen = await open_game(host_pilot, "#create-table")
        table = host_screen.state.table
        assert table.status is TableStatus.WAITING
        await shows(host_pilot, f"Code: {table.code}", "Waiting for an opponent", table.join_url)

        async with guest.run_test(size=SCREEN_SIZE) as guest_pilot:
            await connected(guest_pilot)
            # Typed as a person would: lower case; Enter in the box joins.
            await guest_pilot.click("#join-code")
            await guest_pilot.press(*table.code.lower(), "enter")
            guest_screen = await game_screen(guest_pilot, table.table_id)
            await wait_until(
                host_pilot,
                lambda: host_screen.state.table.status is TableStatus.PLAYING,
                "the host to see the guest sit down",
            )
            host_role = host_screen.state.table.role
            guest_role = guest_screen.state.table.role
            assert {host_role, guest_role} == {Role.WHITE, Role.BLACK}
            # Each player's pieces are drawn at the bottom.
            assert host_screen.state.seat_at_bottom is Color(host_role.value)
            assert guest_screen.state.seat_at_bottom is Color(guest_role.value)

            black = (
                (host_pilot, host_screen)
                if host_role is Role.BLACK
                else (guest_pilot, guest_screen)
            )
            white = (
                (guest_pilot, guest_screen)
                if black[1] is host_screen
                else (host_pilot, host_screen)
            )
            await key_move(*black, (11, 15))
            await wait_until(white[0], lambda: white[1].state.game.moves == ("11-15",), "11-15")
            await my_turn(*white)
            await shows(white[0], "Your move")
            await key_move(*white, (22, 18))
            await wait_until(
                black[0], lambda: black[1].state.game.moves == ("11-15", "22-18"), "22-18"
            )
            await my_turn(*black)
            # Between people moves are final: the take-back key is refused in words.
            await black[0].press("ctrl+z")
            await wait_until(
                black[0],
                lambda: "Moves are final between people" in screen_text(black[0].app),
                "the take-back refusal",
            )


async def test_a_table_joined_from_the_live_lobby_and_watched_by_a_third(
    backend: Backend, tmp_path: Path
) -> None:
    host = GotiApp(server=backend.target, files=files_in(tmp_path, "host"))
    guest = GotiApp(server=backend.target, files=files_in(tmp_path, "guest"))
    watcher = GotiApp(server=backend.target, files=files_in(tmp_path, "watcher"))
    async with guest.run_test(size=SCREEN_SIZE) as guest_pilot:
        await connected(guest_pilot)
        await guest_pilot.click("#lobby")
        await wait_until(guest_pilot, lambda: isinstance(guest.screen, LobbyScreen), "the lobby")
        lobby = guest.screen
        assert isinstance(lobby, LobbyScreen)
        await wait_until(guest_pilot, lambda: "No open tables yet" in screen_text(guest), "empty")

        async with host.run_test(size=SCREEN_SIZE) as host_pilot:
            await connected(host_pilot)
            await host_pilot.click("#public")
            host_screen = await open_game(host_pilot, "#create-table")
            table_id = host_screen.state.table.table_id
            # The open table shows up in the lobby by itself.
            await wait_until(
                guest_pilot, lambda: [t.table_id for t in lobby.tables] == [table_id], "listed"
            )
            await shows(guest_pilot, host_screen.state.table.code)
            lobby.query_one(DataTable).focus()
            await guest_pilot.press("enter")
            guest_screen = await game_screen(guest_pilot, table_id)
            await wait_until(
                host_pilot,
                lambda: host_screen.state.table.status is TableStatus.PLAYING,
                "the host to see the game start",
            )
            assert guest_screen.state.table.role is not Role.SPECTATOR

            async with watcher.run_test(size=SCREEN_SIZE) as watcher_pilot:
                await connected(watcher_pilot)
                watcher.screen.query_one("#watch-id", Input).value = table_id
                await watcher_pilot.click("#watch")
                watching = await game_screen(watcher_pilot, table_id)
                assert watching.state.table.role is Role.SPECTATOR
                assert watching.entry is None
                await wait_until(
                    watcher_pilot, lambda: "Watching" in screen_text(watcher), "Watching shown"
                )

                black_pilot, black_screen = (
                    (host_pilot, host_screen)
                    if host_screen.state.table.role is Role.BLACK
                    else (guest_pilot, guest_screen)
                )
                await key_move(black_pilot, black_screen, (9, 14))
                await wait_until(
                    watcher_pilot, lambda: watching.state.game.moves == ("9-14",), "the watcher"
                )
                # A spectator's keys change nothing and say why.
                await watcher_pilot.press("r")
                await wait_until(
                    watcher_pilot,
                    lambda: "You are watching this table, not playing" in screen_text(watcher),
                    "the refusal",
                )
