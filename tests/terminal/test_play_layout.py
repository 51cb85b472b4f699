"""``goti play`` at the sizes people's terminals have (80x24, 120x40) in both languages: every
button shown beside the board is whole on the screen, and in Nepali no box border closes a
line after Devanagari (which some terminals, tmux among them, draw wider than Textual
reckons, pushing such a border out of line)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button

from goti.rules import Color
from goti_client.terminal.app import GotiApp
from goti_client.terminal.dialogs import Question
from goti_client.terminal.game_screen import GameScreen
from goti_client.terminal.labels import Language
from goti_client.terminal.lobby_screen import LobbyScreen
from goti_client.terminal.seek_screen import SeekScreen

from .pilot_moves import (
    connected,
    files_in,
    key_notation,
    my_turn,
    open_game,
    screen_text,
    wait_until,
)
from .running_backend import Backend

SIZES = ((80, 24), (120, 40))
NO_BORDER = frozenset({"", "none", "hidden", "blank"})


def is_devanagari(character: str) -> bool:
    return "\u0900" <= character <= "\u097f"


def hidden_buttons(screen: GameScreen) -> list[str]:
    """The buttons shown beside the board whose label is not whole on the screen."""
    side = screen.query_one("#side").region
    whole_screen = screen.region
    problems = []
    for button in screen.query(Button):
        if not button.display:
            continue
        label = str(button.label)
        region = button.region
        if not (
            region
            and whole_screen.contains_region(region)
            and side.contains_region(region)
            and button.content_region.width >= cell_len(label)
        ):
            problems.append(f"{label!r} at {region} (side panel {side}, screen {whole_screen})")
    return problems


def borders_after_devanagari(app: GotiApp, screen: Screen[Any]) -> list[str]:
    """Right-hand borders that close a screen line on which Devanagari comes before them."""
    lines = screen_text(app).splitlines()
    problems = []
    for widget in screen.walk_children(Widget, with_self=True):
        if not widget.display or widget.styles.border_right[0] in NO_BORDER:
            continue
        region = widget.region
        border_column = region.right - 1
        for row in range(region.y, min(region.bottom, len(lines))):
            column = 0
            for character in lines[row]:
                if column >= border_column:
                    break
                if is_devanagari(character):
                    problems.append(f"{widget!r} on line {row}: {lines[row].strip()!r}")
                    break
                column += cell_len(character)
    return problems


async def laid_out_at(pilot: Pilot[Any], width: int, height: int) -> None:
    """Wait until the screen is laid out again at the new size, before measuring it."""
    await wait_until(
        pilot,
        lambda: pilot.app.screen._compositor.size == (width, height),
        f"the layout at {width}x{height}",
    )


async def check_at_every_size(pilot: Pilot[Any], app: GotiApp) -> None:
    for width, height in SIZES:
        await pilot.resize_terminal(width, height)
        await laid_out_at(pilot, width, height)
        screen = app.screen
        if isinstance(screen, GameScreen):
            assert hidden_buttons(screen) == [], f"at {width}x{height}:\n{screen_text(app)}"
        if app.language is Language.NEPALI:
            assert borders_after_devanagari(app, screen) == [], (
                f"at {width}x{height}:\n{screen_text(app)}"
            )


@pytest.mark.parametrize("language", list(Language))
async def test_every_button_is_whole_and_no_border_follows_devanagari(
    backend: Backend, tmp_path: Path, language: Language
) -> None:
    app = GotiApp(server=backend.target, files=files_in(tmp_path, "player"), language=language)
    async with app.run_test(size=SIZES[0]) as pilot:
        await connected(pilot)
        await check_at_every_size(pilot, app)

        # Against the computer, after a move each: offer a draw, resign, take back, leave.
        screen = await open_game(pilot, "#play-computer")
        await key_notation(pilot, screen, "11-15")
        await my_turn(pilot, screen)
        shown = {button.id for button in screen.query(Button) if button.display}
        assert shown == {"offer-draw", "resign", "take-back", "leave"}
        await check_at_every_size(pilot, app)

        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, Question), "the resign question")
        await check_at_every_size(pilot, app)
        await pilot.press("y")
        await wait_until(pilot, lambda: screen.state.game.is_over, "the resignation")
        await wait_until(pilot, lambda: screen.query_one("#rematch").display, "Rematch shown")
        await check_at_every_size(pilot, app)

        # Pass and play with a draw offer open: accept, decline, resign, leave.
        await pilot.press("q")
        await wait_until(pilot, lambda: app.screen is app.start_screen, "the start screen")
        screen = await open_game(pilot, "#pass-and-play")
        await key_notation(pilot, screen, "11-15")
        await key_notation(pilot, screen, "23-19")
        await my_turn(pilot, screen)
        await pilot.press("d")
        await wait_until(pilot, lambda: screen.state.game.draw_offer is Color.BLACK, "the offer")
        await key_notation(pilot, screen, "9-14")
        await my_turn(pilot, screen)
        shown = {button.id for button in screen.query(Button) if button.display}
        assert shown == {"accept-draw", "decline-draw", "resign", "leave"}
        await check_at_every_size(pilot, app)

        await pilot.press("q")
        await wait_until(pilot, lambda: app.screen is app.start_screen, "the start screen")
        await pilot.click("#lobby")
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
        await check_at_every_size(pilot, app)

        # Waiting to be paired (Play online now).
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.start_screen, "the start screen")
        await pilot.click("#seek")
        await wait_until(pilot, lambda: isinstance(app.screen, SeekScreen), "the wait")
        await check_at_every_size(pilot, app)
