"""Hand-built positions, one per rule, with the expected moves reasoned from the rules.

Square numbers as in PERFT.md: 1 = b8 ... 32 = g1.  Black men move towards 29-32, White men
towards 1-4.  Each test's docstring says what it checks.
"""

from __future__ import annotations

import pytest

from goti.rules.errors import (
    AmbiguousMoveError,
    IllegalMoveError,
    IllegalReason,
    InvalidMoveError,
)
from goti.rules.position import Position


def notations(fen: str, variant: str) -> set[str]:
    position = Position.from_fen(fen, variant)
    return {position.notation(move) for move in position.legal_moves}


# -- both variants ---------------------------------------------------------------------------


def test_start_position_has_seven_moves_for_the_first_mover() -> None:
    """English: Black's men on 9-12 can each step down (12 only to 16): seven moves."""
    assert notations("B:W21-32:B1-12", "english") == {
        "9-13",
        "9-14",
        "10-14",
        "10-15",
        "11-15",
        "11-16",
        "12-16",
    }
    # Russian: White's men on c3..g3 step up; a3 only to b4, the others both ways.
    assert notations("W:W21-32:B1-12", "russian") == {
        "a3-b4",
        "c3-b4",
        "c3-d4",
        "e3-d4",
        "e3-f4",
        "g3-f4",
        "g3-h4",
    }


@pytest.mark.parametrize("variant", ["english", "russian"])
def test_capture_is_compulsory(variant: str) -> None:
    """Black's man on 14 can jump White's man on 18 to 23, so the quiet moves of 1 are out."""
    position = Position.from_fen("B:W18:B1,14", variant)
    assert [move.path for move in position.legal_moves] == [(14, 23)]
    assert position.must_capture == [14]
    with pytest.raises(IllegalMoveError) as caught:
        position.find_move([1, 5])
    assert caught.value.reason is IllegalReason.CAPTURE_REQUIRED
    assert "a capture is compulsory" in str(caught.value)
    assert caught.value.legal == (position.notation(next(iter(position.legal_moves))),)


@pytest.mark.parametrize("variant", ["english", "russian"])
def test_multi_jump_must_be_completed(variant: str) -> None:
    """Black's man on 1 jumps 6 to 10, then must jump 14 to 17: stopping on 10 is illegal."""
    position = Position.from_fen("B:W6,14:B1", variant)
    moves = list(position.legal_moves)
    assert [move.path for move in moves] == [(1, 10, 17)]
    assert moves[0].captured == (6, 14)
    with pytest.raises(IllegalMoveError) as caught:
        position.find_move([1, 10])
    assert caught.value.reason is IllegalReason.INCOMPLETE_CAPTURE


@pytest.mark.parametrize("variant", ["english", "russian"])
def test_free_choice_among_captures_no_majority_rule(variant: str) -> None:
    """The double jump 1x10x17 does not oblige: the single jump 3x12 is legal too."""
    position = Position.from_fen("B:W6,8,14:B1,3", variant)
    paths = {move.path for move in position.legal_moves}
    assert paths == {(1, 10, 17), (3, 12)}


def test_jumped_piece_cannot_be_jumped_twice() -> None:
    """English: the king on 30 jumps 26 to 23; jumping 26 again back to 30 is not allowed."""
    assert notations("W:WK30:B26", "english") == {"30x23"}


@pytest.mark.parametrize(("variant", "count", "unique"), [("english", 2, 1), ("russian", 2, 1)])
def test_each_capture_order_is_its_own_move(variant: str, count: int, unique: int) -> None:
    """A king on c1 (30) can take the four men round the diamond 26, 18, 17, 25 either way
    round, ending back on 30: two moves, one result."""
    position = Position.from_fen("W:WK30:B17,18,25,26", variant)
    moves = list(position.legal_moves)
    assert len(moves) == count
    assert {move.path for move in moves} == {(30, 23, 14, 21, 30), (30, 21, 14, 23, 30)}
    assert {frozenset(move.captured) for move in moves} == {frozenset({17, 18, 25, 26})}
    assert len(position.legal_moves.unique()) == unique
    after = {position.push(move) for move in moves}
    assert len(after) == 1
    (only,) = after
    assert only.fen() in ("B:WK30:B", "B:WKc1:B")


def test_capturing_a_whole_side_leaves_it_without_pieces() -> None:
    """After the diamond capture Black has nothing left."""
    position = Position.from_fen("W:WK30:B17,18,25,26", "english")
    after = position.push(next(iter(position.legal_moves)))
    assert after.count(after.turn) == 0
    assert not after.legal_moves


# -- English ------------------------------------------------------------------------------------


def test_english_men_do_not_capture_backwards() -> None:
    """Black's man on 18 has White's man on 14 behind it: in English it just steps on."""
    assert notations("B:W14:B18", "english") == {"18-22", "18-23"}


def test_english_king_captures_backwards_one_square_away() -> None:
    """A Black king on 18 jumps the man on 14 (behind it) to 9."""
    assert notations("B:W14:BK18", "english") == {"18x9"}


def test_english_king_steps_one_square_any_direction() -> None:
    """A lone king on 18 (d4) steps to 14, 15, 22 or 23 and no further."""
    assert notations("W:WK18:B1", "english") == {"18-14", "18-15", "18-22", "18-23"}


def test_english_crowning_ends_the_move_even_mid_capture() -> None:
    """Black's man 22 jumps 26 to 31 and is crowned; from 31 it could jump 27 as a king,
    but in English the move ends on crowning."""
    position = Position.from_fen("B:W26,27:B22", "english")
    moves = list(position.legal_moves)
    assert [(move.path, move.crowned) for move in moves] == [((22, 31), True)]
    after = position.push(moves[0])
    assert after.fen() == "W:W27:BK31"


def test_english_quiet_crowning() -> None:
    """White's man on 6 steps to 1 or 2 and is crowned either way."""
    position = Position.from_fen("W:W6:B13", "english")
    assert {(move.path, move.crowned) for move in position.legal_moves} == {
        ((6, 1), True),
        ((6, 2), True),
    }


# -- Russian ------------------------------------------------------------------------------------


def test_russian_men_capture_backwards() -> None:
    """Black's man on d4 (18) jumps White's man on c5 (14), behind it, landing on b6 (9)."""
    assert notations("B:W14:B18", "russian") == {"d4:b6"}


def test_russian_man_crowned_mid_capture_carries_on_as_a_flying_king() -> None:
    """Black's man c3 jumps d2 to e1 and is crowned; as a king it then takes f2 and may land
    on g3 or h4 (nothing more to take from either)."""
    position = Position.from_fen("B:W26,27:B22", "russian")
    moves = list(position.legal_moves)
    assert {position.notation(move) for move in moves} == {"c3:e1:g3", "c3:e1:h4"}
    assert all(move.crowned and move.captured == (26, 27) for move in moves)


def test_russian_man_reaching_the_far_row_by_capture_continues() -> None:
    """White's man b6 takes c7 landing on d8, crowned; the new king then flies over e7 and
    takes f6, landing on g5 or h4.  In English the same capture stops on d8."""
    assert notations("W:Wb6:Bc7,f6", "russian") == {"b6:d8:g5", "b6:d8:h4"}
    assert notations("W:W9:B6,11", "english") == {"9x2"}


def test_russian_king_flies_over_empty_squares() -> None:
    """A lone White king on a1 can go to any square of the long diagonal."""
    assert notations("W:WKa1:Bh2", "russian") == {
        "a1-b2",
        "a1-c3",
        "a1-d4",
        "a1-e5",
        "a1-f6",
        "a1-g7",
        "a1-h8",
    }


def test_russian_king_chooses_any_landing_when_no_capture_follows() -> None:
    """The king on a1 takes c3 from afar and may stop on any empty square beyond it."""
    assert notations("W:WKa1:Bc3", "russian") == {"a1:d4", "a1:e5", "a1:f6", "a1:g7", "a1:h8"}


def test_russian_king_must_land_where_the_capture_goes_on() -> None:
    """After taking c3 the king could stop on d4..h8, but only from e5 can it take d6, so it
    must land on e5; beyond d6 it may then stop on c7 or b8."""
    assert notations("W:WKa1:Bc3,d6", "russian") == {"a1:e5:c7", "a1:e5:b8"}


def test_russian_straight_line_double_capture_is_one_move_written_behind_the_first_piece() -> None:
    """Taking c3 and f6 along one diagonal is written with d4, the square just behind c3,
    whichever square between the two pieces the king 'touched'."""
    assert notations("W:WKa1:Bc3,f6", "russian") == {"a1:d4:g7", "a1:d4:h8"}


def test_russian_turkish_strike_captured_pieces_block_until_the_move_ends() -> None:
    """The king takes c3, f4 and f2 and ends on e1.  Were c3 lifted at once, the king could go
    on from e1 through c3's square to take b4; it stays, so b4 survives.  The other route
    takes c3 then f2 (from d4) and ends on g1."""
    position = Position.from_fen("W:WKa1:Bc3,f4,f2,b4,g7,h8", "russian")
    moves = {position.notation(move): move for move in position.legal_moves}
    assert set(moves) == {"a1:e5:g3:e1", "a1:d4:g1"}
    assert moves["a1:e5:g3:e1"].captured == (22, 19, 27)
    assert all(17 not in move.captured for move in moves.values())


# -- notation ---------------------------------------------------------------------------------


def test_parse_move_takes_short_captures_when_they_name_one_move() -> None:
    """1x17 stands for the only double jump 1x10x17."""
    position = Position.from_fen("B:W6,14:B1", "english")
    assert position.parse_move("1x17").path == (1, 10, 17)
    assert position.parse_move("1x10x17").path == (1, 10, 17)
    assert position.parse_move(" 1 x 10 x 17 ").path == (1, 10, 17)


def test_parse_move_lists_the_candidates_of_an_ambiguous_short_capture() -> None:
    """30x30 fits both ways round the diamond."""
    position = Position.from_fen("W:WK30:B17,18,25,26", "english")
    with pytest.raises(AmbiguousMoveError) as caught:
        position.parse_move("30x30")
    assert set(caught.value.candidates) == {"30x23x14x21x30", "30x21x14x23x30"}
    assert "30x23x14x21x30" in str(caught.value)


def test_parse_move_accepts_numbers_or_algebraic_squares_in_either_variant() -> None:
    russian = Position.initial("russian")
    assert russian.parse_move("c3-d4") == russian.parse_move("22-18")
    english = Position.initial("english")
    assert english.parse_move("11-15") == english.parse_move("f6-e5")


@pytest.mark.parametrize("text", ["", "11", "11_15", "eleven-fifteen", "11-15-", "x11"])
def test_parse_move_rejects_text_that_is_not_a_move(text: str) -> None:
    with pytest.raises(InvalidMoveError):
        Position.initial().parse_move(text)


def test_parse_move_rejects_squares_that_do_not_exist() -> None:
    with pytest.raises(InvalidMoveError, match="'33'"):
        Position.initial().parse_move("11-33")
    with pytest.raises(InvalidMoveError, match="'a2'"):
        Position.initial("russian").parse_move("a2-b3")


def test_illegal_move_lists_the_legal_ones() -> None:
    """12-17 is no step at all; the seven opening moves are offered instead."""
    with pytest.raises(IllegalMoveError) as caught:
        Position.initial().parse_move("12-17")
    assert caught.value.reason is IllegalReason.ILLEGAL_MOVE
    assert len(caught.value.legal) == 7
    assert "11-15" in str(caught.value)


def test_moving_the_opponents_piece_is_illegal() -> None:
    with pytest.raises(IllegalMoveError):
        Position.initial().parse_move("22-18")


def test_notation_of_both_variants() -> None:
    english = Position.from_fen("W:W22:B18,11", "english")
    assert {english.notation(move) for move in english.legal_moves} == {"22x15x8"}
    russian = Position.from_fen("W:Wc3:Bd4,f6", "russian")
    assert {russian.notation(move) for move in russian.legal_moves} == {"c3:e5:g7"}
