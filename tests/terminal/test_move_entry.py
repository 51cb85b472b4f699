"""The move-entry state machine on its own: picking, landing, multiple jumps square by square,
finishing by itself, cancelling, forced pieces; and, over random games of both variants,
every legal move enters square by square as exactly that move."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from goti.rules import ENGLISH, RUSSIAN, Game, Move, Position, Square, Variant
from goti_client.terminal.selection import EntryStep, MoveEntry


def after(*moves: str, variant: Variant = ENGLISH) -> Position:
    game = Game(variant)
    for move in moves:
        game.play(move)
    return game.position


def entry_at(position: Position) -> MoveEntry:
    return MoveEntry(position.legal_moves)


def test_a_quiet_move_is_a_pick_then_a_landing() -> None:
    entry = entry_at(Position.initial())
    assert entry.movable == {9, 10, 11, 12}
    assert entry.selected is None
    assert entry.targets == frozenset()
    assert entry.choose(Square(11)).step is EntryStep.SELECTED
    assert entry.targets == {15, 16}
    result = entry.choose(Square(16))
    assert result.step is EntryStep.COMPLETED
    assert result.move == Move((Square(11), Square(16)))
    # Ready for another try if the server refuses the move.
    assert entry.selected is None


def test_squares_that_hold_nothing_movable_are_ignored_before_a_pick() -> None:
    entry = entry_at(Position.initial())
    for square in (1, 5, 14, 21, 32):
        assert entry.choose(Square(square)).step is EntryStep.IGNORED
    assert not entry.path


def test_another_movable_piece_replaces_the_pick_and_elsewhere_cancels() -> None:
    entry = entry_at(Position.initial())
    entry.choose(Square(9))
    assert entry.choose(Square(12)).step is EntryStep.SELECTED
    assert entry.selected == 12
    assert entry.choose(Square(20)).step is EntryStep.CANCELLED
    assert entry.selected is None
    entry.choose(Square(10))
    assert entry.choose(Square(10)).step is EntryStep.CANCELLED
    entry.choose(Square(10))
    assert entry.cancel().step is EntryStep.CANCELLED
    assert entry.cancel().step is EntryStep.IGNORED


def test_the_only_piece_that_can_move_is_picked_and_stays_picked() -> None:
    position = after("12-16", "22-18", "10-14", "25-22", "11-15")
    entry = entry_at(position)
    assert entry.forced_piece == 18
    assert entry.selected == 18
    assert entry.targets == {11}
    assert entry.choose(Square(18)).step is EntryStep.IGNORED
    assert entry.choose(Square(30)).step is EntryStep.IGNORED
    assert entry.cancel().step is EntryStep.IGNORED
    assert entry.selected == 18
    result = entry.choose(Square(11))
    assert result.step is EntryStep.COMPLETED
    assert result.move is not None
    assert result.move.captured == (15,)
    assert entry.selected == 18


def test_a_forking_jump_is_chosen_landing_by_landing() -> None:
    position = after("12-16", "22-18", "10-14", "25-22", "11-15", "18x11", "8x15", "23-18", "14x23")
    entry = entry_at(position)
    assert entry.movable == {26, 27}
    entry.choose(Square(26))
    assert entry.targets == {19}
    assert not entry.jumped
    assert entry.choose(Square(19)).step is EntryStep.EXTENDED
    assert entry.path == (26, 19)
    assert entry.targets == {10, 12}
    assert entry.jumped == (23,)
    result = entry.choose(Square(12))
    assert result.step is EntryStep.COMPLETED
    assert result.move is not None
    assert result.move.path == (26, 19, 12)
    assert result.move.captured == (23, 16)


def test_choosing_elsewhere_mid_jump_drops_the_whole_jump() -> None:
    position = after("12-16", "22-18", "10-14", "25-22", "11-15", "18x11", "8x15", "23-18", "14x23")
    entry = entry_at(position)
    entry.choose(Square(26))
    entry.choose(Square(19))
    assert entry.choose(Square(1)).step is EntryStep.CANCELLED
    assert not entry.path
    entry.choose(Square(26))
    entry.choose(Square(19))
    assert entry.choose(Square(27)).step is EntryStep.SELECTED
    assert entry.path == (27,)


def test_a_jump_finishes_by_itself_when_one_way_is_left() -> None:
    position = after("9-14", "24-20", "12-16", "22-17", "6-9", "25-22", "14-18")
    entry = entry_at(position)
    entry.choose(Square(22))
    result = entry.choose(Square(15))
    assert result.step is EntryStep.COMPLETED
    assert result.move is not None
    assert result.move.path == (22, 15, 6)


def test_a_flying_king_chooses_where_it_lands() -> None:
    # A White king on a1 (29) takes c3 (22) and may land anywhere from d4 to h8; nothing else
    # on the board moves.
    position = Position.from_fen("W:WK29:B22,1", RUSSIAN)
    entry = entry_at(position)
    assert entry.selected == 29
    assert entry.targets == {18, 15, 11, 8, 4}
    result = entry.choose(Square(11))
    assert result.step is EntryStep.COMPLETED
    assert result.move is not None
    assert result.move.path == (29, 11)
    assert position.notation(result.move) == "a1:f6"


def test_no_legal_moves_means_nothing_to_pick() -> None:
    entry = MoveEntry(())
    assert entry.movable == frozenset()
    assert entry.forced_piece is None
    assert entry.choose(Square(1)).step is EntryStep.IGNORED


@settings(max_examples=60, deadline=None)
@given(
    variant=st.sampled_from([ENGLISH, RUSSIAN]),
    choices=st.lists(st.integers(min_value=0, max_value=1000), min_size=0, max_size=60),
)
def test_every_legal_move_enters_square_by_square_as_itself(
    variant: Variant, choices: list[int]
) -> None:
    game = Game(variant)
    for choice in choices:
        moves = game.legal_moves
        if game.is_over or not moves:
            break
        game.push(moves[choice % len(moves)])
    for move in game.position.legal_moves:
        entry = MoveEntry(game.position.legal_moves)
        completed = None
        squares = list(move.path)
        if entry.selected == move.origin:
            squares = squares[1:]
        for square in squares:
            result = entry.choose(square)
            assert result.step in (EntryStep.SELECTED, EntryStep.EXTENDED, EntryStep.COMPLETED)
            if result.step is EntryStep.COMPLETED:
                completed = result.move
                break
        assert completed is not None
        assert completed.path == move.path
        assert completed.captured == move.captured
