"""``goti play`` headless against a real backend with its other choices: Russian rules in
Nepali, a turn timer on a table with a friend, and a light terminal."""

from __future__ import annotations

from pathlib import Path

from goti.rules import RUSSIAN, Color
from goti_client.errors import Reason
from goti_client.tables import Role, TableStatus
from goti_client.terminal.app import GotiApp
from goti_client.terminal.labels import NEPALI_LABELS, Language
from goti_client.terminal.player_files import PlayerFiles
from goti_client.terminal.terminal_theme import Brightness

from .pilot_moves import (
    SCREEN_SIZE,
    connected,
    files_in,
    game_screen,
    key_notation,
    my_turn,
    open_game,
    screen_text,
    shows,
    wait_until,
)
from .running_backend import Backend


async def test_russian_rules_in_nepali(backend: Backend, player_files: PlayerFiles) -> None:
    app = GotiApp(server=backend.target, files=player_files, language=Language.NEPALI)
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        await connected(pilot)
        await shows(pilot, "गोटी · चेकर्स")
        await pilot.click("#variant-russian")
        screen = await open_game(pilot, "#pass-and-play")
        assert screen.state.table.variant == RUSSIAN
        await shows(pilot, "रुसी चेकर्स", "सेतोको पालो", "a      b      c")
        await my_turn(pilot, screen)
        await pilot.press("d")
        await wait_until(
            pilot,
            lambda: NEPALI_LABELS.refusals[Reason.DRAW_OFFER_BEFORE_BOTH_MOVED] in screen_text(app),
            "the refusal in Nepali",
        )
        await key_notation(pilot, screen, "c3-d4")
        await key_notation(pilot, screen, "f6-g5")
        assert screen.state.game.moves == ("c3-d4", "f6-g5")
        await shows(pilot, "c3-d4", "f6-g5")


async def test_a_turn_timer_counts_down_on_a_light_terminal(
    backend: Backend, tmp_path: Path
) -> None:
    host = GotiApp(
        server=backend.target, files=files_in(tmp_path, "host"), brightness=Brightness.LIGHT
    )
    guest = GotiApp(server=backend.target, files=files_in(tmp_path, "guest"))
    async with host.run_test(size=SCREEN_SIZE) as host_pilot:
        await connected(host_pilot)
        assert host.theme == "textual-light"
        await host_pilot.click("#timer-30")
        host_screen = await open_game(host_pilot, "#create-table")
        table = host_screen.state.table
        assert table.turn_timer_seconds == 30
        async with guest.run_test(size=SCREEN_SIZE) as guest_pilot:
            await connected(guest_pilot)
            assert guest.theme == "textual-dark"
            await guest_pilot.click("#join-code")
            await guest_pilot.press(*table.code, "enter")
            await game_screen(guest_pilot, table.table_id)
            await wait_until(
                host_pilot,
                lambda: host_screen.state.table.status is TableStatus.PLAYING,
                "the game to start",
            )
            await shows(host_pilot, "left", "⏱ 0:")
            deadline = host_screen.state.table.turn_deadline
            assert deadline is not None
            black_is_host = host_screen.state.table.role is Role.BLACK
            assert host_screen.state.turn is not None
            assert host_screen.state.turn.side is Color.BLACK
            assert black_is_host == (host_screen.state.my_turn is not None)
