"""``goti play`` headless against a real backend, pass and play at one terminal: moves by
keys and clicks, forced pieces, multiple jumps chosen square by square, draws offered and
answered, resignation, and refusals shown as one line."""

from __future__ import annotations

from goti.rules import Color, Termination
from goti_client.tables import Role, TableStatus
from goti_client.terminal.app import GotiApp
from goti_client.terminal.player_files import PlayerFiles

from .pilot_moves import (
    SCREEN_SIZE,
    click_square,
    connected,
    key_notation,
    key_square,
    my_turn,
    open_game,
    screen_text,
    shows,
    wait_until,
)
from .running_backend import Backend

BRANCHING_JUMP_LINE = (
    "12-16",
    "22-18",
    "10-14",
    "25-22",
    "11-15",
    "18x11",
    "8x15",
    "23-18",
    "14x23",
)
"""After these, White captures 26x19x12, 26x19x10 or 27x18x11: from 19 the jump forks."""
ONE_WAY_JUMP_LINE = ("9-14", "24-20", "12-16", "22-17", "6-9", "25-22", "14-18")
"""After these, White captures 23x14 or 22x15x6, whose second jump is the only way on."""


async def test_moves_by_key_with_forced_pieces_and_a_jump_chosen_square_by_square(
    backend: Backend, player_files: PlayerFiles
) -> None:
    app = GotiApp(server=backend.target, files=player_files)
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        await connected(pilot)
        screen = await open_game(pilot, "#pass-and-play")
        assert screen.state.table.role is Role.BOTH
        for notation in BRANCHING_JUMP_LINE:
            await my_turn(pilot, screen)
            entry = screen.entry
            assert entry is not None
            if notation in ("18x11", "8x15", "14x23"):
                # The only piece that can move is picked before the player does anything.
                assert entry.forced_piece == int(notation.split("x")[0])
                assert entry.selected == entry.forced_piece
            await key_notation(pilot, screen, notation)
        assert screen.state.game.moves == BRANCHING_JUMP_LINE

        await my_turn(pilot, screen)
        entry = screen.entry
        assert entry is not None
        assert entry.movable == {26, 27}
        assert screen.board.marks.must_capture == {26, 27}
        await shows(pilot, "You must capture")
        # A piece that cannot capture, chosen anyway: the line says which pieces must.
        await click_square(pilot, screen, 31)
        await wait_until(
            pilot,
            lambda: "You must capture: pick 26, 27" in screen_text(app),
            "why 31 cannot move",
        )
        assert entry.selected is None

        await click_square(pilot, screen, 26)
        await wait_until(pilot, lambda: entry.selected == 26, "26 to be picked")
        assert entry.targets == {19}
        await click_square(pilot, screen, 19)
        await wait_until(pilot, lambda: entry.path == (26, 19), "the landing on 19")
        # Two ways on from 19: the board marks both and waits for the next landing.
        assert entry.targets == {10, 12}
        assert screen.board.marks.targets == {10, 12}
        assert screen.board.marks.jumped == (23,)
        await click_square(pilot, screen, 10)
        await wait_until(
            pilot, lambda: screen.state.game.moves[-1:] == ("26x19x10",), "26x19x10 played"
        )
        await shows(pilot, "26x19x10")
        assert screen.state.captured_by(Color.WHITE) == 3


async def test_a_jump_finishes_itself_when_one_way_is_left_and_elsewhere_cancels(
    backend: Backend, player_files: PlayerFiles
) -> None:
    app = GotiApp(server=backend.target, files=player_files)
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        await connected(pilot)
        screen = await open_game(pilot, "#pass-and-play")
        for notation in ONE_WAY_JUMP_LINE:
            await key_notation(pilot, screen, notation)
        await my_turn(pilot, screen)
        entry = screen.entry
        assert entry is not None

        await key_square(pilot, screen, 22)
        await wait_until(pilot, lambda: entry.selected == 22, "22 to be picked")
        # A square that is neither a landing nor a piece that can move lets 22 go.
        await key_square(pilot, screen, 30)
        await wait_until(pilot, lambda: entry.selected is None, "the pick to be dropped")
        await key_square(pilot, screen, 22)
        await pilot.press("escape")
        await wait_until(pilot, lambda: entry.selected is None, "Esc to drop the pick")

        await key_square(pilot, screen, 22)
        await key_square(pilot, screen, 15)
        await wait_until(
            pilot, lambda: screen.state.game.moves[-1:] == ("22x15x6",), "22x15x6 played"
        )


async def test_a_draw_offered_then_accepted_and_refusals_as_one_line(
    backend: Backend, player_files: PlayerFiles
) -> None:
    app = GotiApp(server=backend.target, files=player_files)
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        await connected(pilot)
        screen = await open_game(pilot, "#pass-and-play")
        await my_turn(pilot, screen)
        # Before both sides have moved the server refuses; the player reads one line.
        await pilot.press("d")
        assert "Traceback" not in await shows(pilot, "Play a move first")

        await key_notation(pilot, screen, "11-15")
        await key_notation(pilot, screen, "23-19")
        await my_turn(pilot, screen)
        await pilot.press("d")
        await wait_until(
            pilot, lambda: screen.state.game.draw_offer is Color.BLACK, "Black's draw offer"
        )
        await key_notation(pilot, screen, "9-14")
        await wait_until(
            pilot,
            lambda: "Black offers a draw: Y accepts, N declines" in screen_text(app),
            "the offer shown to White",
        )
        await pilot.press("y")
        await wait_until(pilot, lambda: screen.state.game.is_over, "the draw")
        outcome = screen.state.game.outcome
        assert outcome is not None
        assert outcome.winner is None
        assert outcome.termination is Termination.AGREEMENT
        await shows(pilot, "Draw: agreed")


async def test_a_draw_declined_then_a_resignation(
    backend: Backend, player_files: PlayerFiles
) -> None:
    app = GotiApp(server=backend.target, files=player_files)
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        await connected(pilot)
        screen = await open_game(pilot, "#pass-and-play")
        await key_notation(pilot, screen, "11-15")
        await key_notation(pilot, screen, "23-19")
        await my_turn(pilot, screen)
        await pilot.press("d")
        await wait_until(pilot, lambda: screen.state.game.draw_offer is not None, "the offer")
        await key_notation(pilot, screen, "9-14")
        await my_turn(pilot, screen)
        await pilot.press("n")
        await wait_until(pilot, lambda: screen.state.game.draw_offer is None, "the decline")
        assert not screen.state.game.is_over

        await my_turn(pilot, screen)
        await pilot.press("r")
        await wait_until(pilot, lambda: "Resign this game?" in screen_text(app), "the question")
        await pilot.press("y")
        await wait_until(pilot, lambda: screen.state.game.is_over, "the resignation")
        outcome = screen.state.game.outcome
        assert outcome is not None
        assert outcome.termination is Termination.RESIGNATION
        assert outcome.winner is Color.BLACK
        assert screen.state.table.status is TableStatus.FINISHED
        await shows(pilot, "Black wins: resignation")
        # A finished game is not offered again at the next start.
        assert player_files.unfinished_table(backend.target) is None


async def test_a_click_away_from_the_picked_piece_cancels_it(
    backend: Backend, player_files: PlayerFiles
) -> None:
    app = GotiApp(server=backend.target, files=player_files)
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        await connected(pilot)
        screen = await open_game(pilot, "#pass-and-play")
        await my_turn(pilot, screen)
        entry = screen.entry
        assert entry is not None
        # A piece hemmed in by its own side is not picked, and the line says why.
        await click_square(pilot, screen, 3)
        await wait_until(pilot, lambda: "That piece has no move" in screen_text(app), "why")
        assert entry.selected is None
        await click_square(pilot, screen, 11)
        await wait_until(pilot, lambda: entry.selected == 11, "11 to be picked")
        # The board drawn again with 11 picked, and the line about 3 gone.
        await shows(pilot, "Black to move", without=["That piece has no move"])
        assert entry.targets == {15, 16}
        await click_square(pilot, screen, 12)
        await wait_until(pilot, lambda: entry.selected == 12, "12 to replace 11")
        await click_square(pilot, screen, 12)
        await wait_until(pilot, lambda: entry.selected is None, "a second click to let 12 go")
        await click_square(pilot, screen, 12)
        await click_square(pilot, screen, 16)
        await wait_until(pilot, lambda: screen.state.game.moves == ("12-16",), "12-16 played")
