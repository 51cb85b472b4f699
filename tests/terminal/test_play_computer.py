"""``goti play`` headless against a real backend with the computer player: a game at Easy
entered by key presses, take-backs with Ctrl+Z, a draw offer the computer answers, the
computer moving first, a rematch, and the streak line."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from goti.rules import Color, Move, Position, Termination
from goti_client.tables import Level, Opponent, Role, TableStatus
from goti_client.terminal.app import GotiApp
from goti_client.terminal.game_screen import GameScreen
from goti_client.terminal.player_files import PlayerFiles
from goti_client.terminal.start_screen import LEVEL_OPPONENTS

from .pilot_moves import (
    SCREEN_SIZE,
    connected,
    game_screen,
    key_move,
    key_notation,
    my_turn,
    open_game,
    screen_text,
    shows,
    wait_until,
)
from .running_backend import Backend

SHORT_GAME_MOVES = 12
"""Own moves entered by keys before the quick test resigns: enough to meet captures,
forced pieces and the computer's replies, short enough for a quick suite."""
WHOLE_GAME_PLIES = 300


def careful_move(position: Position, moves: tuple[Move, ...]) -> Move:
    """A modest player: the biggest capture, else a move after which the opponent can take
    the fewest pieces."""

    def risk(move: Move) -> tuple[int, int, int]:
        after = position.push(move)
        replies = list(after.legal_moves)
        worst = max((len(reply.captured) for reply in replies), default=0)
        return (-len(move.captured), worst, -int(move.crowned))

    return min(moves, key=risk)


async def play_by_keys(pilot: Pilot[None], screen: GameScreen, own_moves: int) -> int:
    """Enter careful moves with the keyboard until the game ends or ``own_moves`` are played;
    returns how many were played."""
    played = 0
    while played < own_moves:
        await my_turn(pilot, screen)
        if screen.state.game.is_over:
            break
        entry = screen.entry
        assert entry is not None
        move = careful_move(screen.state.game.position, entry.legal_moves)
        await key_move(pilot, screen, move.path)
        played += 1
    return played


async def test_a_game_against_the_computer_by_key_presses_then_a_resignation(
    backend: Backend, player_files: PlayerFiles
) -> None:
    app = GotiApp(server=backend.target, files=player_files)
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        await connected(pilot)
        screen = await open_game(pilot, "#play-computer")
        table = screen.state.table
        assert table.opponent is Opponent.COMPUTER_EASY
        # "You" move first: the colour that starts, drawn at the bottom.
        assert table.role is Role.BLACK
        assert screen.state.seat_at_bottom is Color.BLACK
        await wait_until(pilot, lambda: "Win streak 0 · best 0" in screen_text(app), "streak")

        await play_by_keys(pilot, screen, SHORT_GAME_MOVES)
        if not screen.state.game.is_over:
            await my_turn(pilot, screen)
            await pilot.press("r", "y")
            await wait_until(pilot, lambda: screen.state.game.is_over, "the resignation")
        outcome = screen.state.game.outcome
        assert outcome is not None
        await wait_until(
            pilot,
            lambda: any(text in screen_text(app) for text in ("You won!", "You lost", "Draw:")),
            "the result on the screen",
        )
        assert screen.state.table.status is TableStatus.FINISHED
        assert player_files.unfinished_table(backend.target) is None
        me = await app.goti.me()
        await wait_until(
            pilot,
            lambda: f"Win streak {me.win_streak} · best {me.best_streak}" in screen_text(app),
            "the streak after the game",
        )


@pytest.mark.slow
async def test_a_whole_game_against_the_computer_by_key_presses(
    backend: Backend, player_files: PlayerFiles
) -> None:
    app = GotiApp(server=backend.target, files=player_files)
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        await connected(pilot)
        screen = await open_game(pilot, "#play-computer")
        await play_by_keys(pilot, screen, WHOLE_GAME_PLIES)
        assert screen.state.game.is_over
        outcome = screen.state.game.outcome
        assert outcome is not None
        assert outcome.termination is not Termination.RESIGNATION


@pytest.mark.parametrize("level", [Level.EASY, Level.MASTER])
async def test_ctrl_z_takes_back_the_move_and_the_computers_reply(
    backend: Backend, player_files: PlayerFiles, level: Level
) -> None:
    app = GotiApp(server=backend.target, files=player_files)
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        await connected(pilot)
        await pilot.click(f"#level-{level.value}")
        screen = await open_game(pilot, "#play-computer")
        assert screen.state.table.opponent is LEVEL_OPPONENTS[level]
        computer = screen.state.table.white
        assert computer.is_computer and computer.computer_level is level
        await shows(pilot, f"Computer · {level.value.title()}")
        await key_notation(pilot, screen, "11-15")
        await wait_until(pilot, lambda: len(screen.state.game.moves) == 2, "the reply")
        await my_turn(pilot, screen)
        await pilot.press("ctrl+z")
        await wait_until(pilot, lambda: screen.state.game.moves == (), "the take-back")
        assert screen.state.game.position == Position.initial()
        await my_turn(pilot, screen)
        await key_notation(pilot, screen, "9-13")
        await wait_until(pilot, lambda: len(screen.state.game.moves) == 2, "the new reply")
        assert screen.state.game.moves[0] == "9-13"


async def test_a_draw_offer_the_computer_answers(
    backend: Backend, player_files: PlayerFiles
) -> None:
    app = GotiApp(server=backend.target, files=player_files)
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        await connected(pilot)
        screen = await open_game(pilot, "#play-computer")
        await key_notation(pilot, screen, "11-15")
        await my_turn(pilot, screen)
        await pilot.press("d")
        await wait_until(pilot, lambda: screen.state.game.draw_offer is Color.BLACK, "the offer")
        await wait_until(pilot, lambda: "You offered a draw" in screen_text(app), "the notice")
        entry = screen.entry
        assert entry is not None
        await key_move(
            pilot, screen, careful_move(screen.state.game.position, entry.legal_moves).path
        )
        # Level and early: the computer declines, then moves.
        await wait_until(
            pilot,
            lambda: screen.state.game.draw_offer is None and len(screen.state.game.moves) == 4,
            "the computer's answer and move",
        )
        assert not screen.state.game.is_over
        await shows(pilot, "The draw was declined")


async def test_the_computer_moves_first_then_a_rematch_swaps_colours(
    backend: Backend, player_files: PlayerFiles
) -> None:
    app = GotiApp(server=backend.target, files=player_files)
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        await connected(pilot)
        await pilot.click("#first-computer")
        screen = await open_game(pilot, "#play-computer")
        assert screen.state.table.role is Role.WHITE
        assert screen.state.seat_at_bottom is Color.WHITE
        await wait_until(pilot, lambda: len(screen.state.game.moves) == 1, "the first move")
        await my_turn(pilot, screen)
        await pilot.press("r", "y")
        await wait_until(pilot, lambda: screen.state.game.is_over, "the resignation")
        await shows(pilot, "You lost. Black wins: resignation")
        first_table = screen.table_id

        await pilot.press("m")
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, GameScreen) and app.screen.table_id != first_table,
            "the rematch's table",
        )
        rematch = await game_screen(pilot)
        assert rematch.state.table.role is Role.BLACK
        assert rematch.state.table.status is TableStatus.PLAYING
        await key_notation(pilot, rematch, "11-15")
