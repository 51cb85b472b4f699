"""Driving ``goti play`` headless like a player: wait for the screen, walk the cursor with the
arrow keys, press Enter, click squares.  A wait that times out fails with the screen as text
and saves an SVG screenshot beside it."""

from __future__ import annotations

import io
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from textual.app import App
from textual.pilot import Pilot

from goti.rules import Square
from goti_client.terminal.app import GotiApp
from goti_client.terminal.board import BoardView
from goti_client.terminal.board_layout import Direction
from goti_client.terminal.game_screen import GameScreen
from goti_client.terminal.player_files import PlayerFiles
from goti_client.terminal.selection import EntryStep, MoveEntry

WAIT_SECONDS = 30.0
"""Generous: the machine running the tests may be busy."""
SCREEN_SIZE = (130, 44)
SCREENSHOTS = Path(tempfile.gettempdir()) / "goti-terminal-screenshots"
FILE_NAME_UNSAFE = re.compile(r"[^\w.]+")


def files_in(folder: Path, player: str) -> PlayerFiles:
    """The config and data folders of one player of a test."""
    return PlayerFiles(folder / player / "config", folder / player / "data")


def screen_text(app: App[Any]) -> str:
    """What the terminal shows now, as plain text."""
    width, height = app.size
    console = Console(
        width=width, height=height, file=io.StringIO(), force_terminal=True, record=True
    )
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text()


async def wait_until(
    pilot: Pilot[Any], ready: Callable[[], object], what: str, timeout: float = WAIT_SECONDS
) -> None:
    """Let the app run until ``ready()`` is true; fail with the screen after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            app = pilot.app
            assert isinstance(app, GotiApp)
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            name = f"{FILE_NAME_UNSAFE.sub('-', what)[:60]}-{int(time.time())}.svg"
            app.save_screenshot(name, path=str(SCREENSHOTS))
            raise AssertionError(
                f"timed out waiting for {what}; screenshot {SCREENSHOTS / name}; the screen:\n"
                + screen_text(app)
            )
        await pilot.pause(0.05)


async def shows(pilot: Pilot[Any], *texts: str, without: Sequence[str] = ()) -> str:
    """Wait until the screen shows every one of ``texts`` and none of ``without``, and return
    it as text.  The screen draws a moment after the app's state changes (longer on a busy
    machine), so what it shows is waited for, never read straight after a state check."""
    app = pilot.app
    shown = ""

    def showing() -> bool:
        nonlocal shown
        shown = screen_text(app)
        return all(text in shown for text in texts) and not any(text in shown for text in without)

    wanted = ", ".join(repr(text) for text in texts)
    unwanted = f" without {', '.join(repr(text) for text in without)}" if without else ""
    await wait_until(pilot, showing, f"the screen to show {wanted}{unwanted}")
    return shown


async def connected(pilot: Pilot[Any]) -> GotiApp:
    """Wait until the app has signed in."""
    app = pilot.app
    assert isinstance(app, GotiApp)
    await wait_until(pilot, lambda: app.connected and app.me is not None, "the app to connect")
    return app


async def game_screen(pilot: Pilot[Any], table_id: str | None = None) -> GameScreen:
    """Wait for a game screen (of ``table_id``, when given) to be showing."""

    def showing() -> bool:
        screen = pilot.app.screen
        return isinstance(screen, GameScreen) and (table_id is None or screen.table_id == table_id)

    await wait_until(pilot, showing, f"the game screen of {table_id or 'a table'}")
    screen = pilot.app.screen
    assert isinstance(screen, GameScreen)
    return screen


async def open_game(pilot: Pilot[Any], button: str) -> GameScreen:
    """Press a start-screen button that opens a table, and wait for its game screen."""
    await pilot.click(button)
    return await game_screen(pilot)


def arrows_to(board: BoardView, square: Square) -> list[str]:
    """The arrow keys that walk the board's cursor to ``square``."""
    cursor = board.cursor.copy()
    target_row, target_column = board.board_layout.cell(square)
    keys = []
    while cursor.square != square:
        row, column = board.board_layout.cell(cursor.square)
        if row != target_row:
            direction = Direction.UP if target_row < row else Direction.DOWN
        else:
            direction = Direction.LEFT if target_column < column else Direction.RIGHT
        before = cursor.square
        cursor.move(direction)
        assert cursor.square != before, f"the cursor is stuck on {before} going {direction}"
        keys.append(direction.value)
    return keys


async def key_square(pilot: Pilot[Any], screen: GameScreen, square: int) -> None:
    """Walk the cursor to ``square`` with the arrow keys and press Enter."""
    await pilot.press(*arrows_to(screen.board, Square(square)), "enter")


async def click_square(pilot: Pilot[Any], screen: GameScreen, square: int) -> None:
    """Click ``square`` on the board."""
    board = screen.board
    await pilot.click(board, offset=board.square_offset(Square(square)))


async def my_turn(pilot: Pilot[Any], screen: GameScreen) -> None:
    """Wait until the player may enter a move (or the game is over)."""
    await wait_until(
        pilot,
        lambda: (screen.entry is not None and not screen.sending) or screen.state.game.is_over,
        "the player's turn",
    )


def squares_to_enter(entry: MoveEntry, path: Sequence[int]) -> list[int]:
    """The squares a player chooses to enter the move along ``path``: the piece (unless the
    screen picked it already, as the only one that can move) and each landing square up to the
    one that completes the move.  A multiple jump finishes by itself once only one way is
    left, and a square chosen after that would land on the next turn, picking a piece there."""
    rehearsal = MoveEntry(entry.legal_moves)
    squares = list(path)
    if rehearsal.forced_piece == squares[0]:
        squares = squares[1:]
    for count, square in enumerate(squares, start=1):
        result = rehearsal.choose(Square(square))
        if result.step is EntryStep.COMPLETED:
            assert result.move is not None and result.move.path == tuple(path), (
                f"entering {tuple(path)} completes {result.move}"
            )
            return squares[:count]
    raise AssertionError(f"entering {tuple(path)} does not complete a legal move")


async def key_move(pilot: Pilot[Any], screen: GameScreen, path: Sequence[int]) -> None:
    """Enter a whole move with the keyboard, square by square, and wait until it is played
    (the picked piece, when the screen picked it already, is not chosen again, nor a landing
    square after the move finished by itself)."""
    await my_turn(pilot, screen)
    plies = len(screen.state.game.moves)
    entry = screen.entry
    assert entry is not None, "not the player's turn"
    for square in squares_to_enter(entry, path):
        await key_square(pilot, screen, square)
    await wait_until(pilot, lambda: len(screen.state.game.moves) > plies, f"the move {path}")


async def key_notation(pilot: Pilot[Any], screen: GameScreen, notation: str) -> None:
    """Enter the legal move written ``notation`` with the keyboard."""
    await my_turn(pilot, screen)
    entry = screen.entry
    assert entry is not None
    position = screen.state.game.position
    moves = {position.notation(m): m for m in entry.legal_moves}
    assert notation in moves, f"{notation} is not legal after {screen.state.game.moves}"
    move = moves[notation]
    await key_move(pilot, screen, move.path)
