"""PDN FEN in and out, and the precise errors for bad FEN."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from goti.rules.color import Color
from goti.rules.errors import InvalidFenError
from goti.rules.position import Position
from goti.rules.squares import BIT_OF_SQUARE, ROW_BITS


def test_reads_the_pdn_standard_example() -> None:
    position = Position.from_fen("B:W18,24,27,28,K10,K15:B12,16,20,K22,K25,K29")
    assert position.turn is Color.BLACK
    assert position.count(Color.WHITE) == 6
    assert position.count(Color.WHITE, kings=True) == 2
    assert position.count(Color.BLACK, kings=True) == 3
    piece = position.piece_at(29)
    assert piece is not None and piece.color is Color.BLACK and piece.king
    assert position.piece_at(1) is None


def test_ranges_and_empty_lists() -> None:
    assert Position.from_fen("B:W21-32:B1-12") == Position.initial("english")
    lone = Position.from_fen("W:W:B10")
    assert lone.count(Color.WHITE) == 0 and lone.count(Color.BLACK) == 1


def test_algebraic_squares_for_russian() -> None:
    algebraic = Position.from_fen(
        "W:Wa1,c1,e1,g1,b2,d2,f2,h2,a3,c3,e3,g3:Bb6,d6,f6,h6,a7,c7,e7,g7,b8,d8,f8,h8", "russian"
    )
    assert algebraic == Position.initial("russian")
    assert algebraic.fen().startswith("W:Wa3,")


def test_writes_ranges_for_english_and_names_for_russian() -> None:
    assert Position.initial("english").fen() == "B:W21-32:B1-12"
    assert "K" in Position.from_fen("W:WK1,5:B2", "english").fen()
    assert Position.from_fen("W:WKa1:Bb8", "russian").fen() == "W:WKa1:Bb8"


def test_tolerates_quotes_spaces_and_a_final_full_stop() -> None:
    assert Position.from_fen(' "B:W21-32:B1-12." ') == Position.initial()


@pytest.mark.parametrize(
    ("fen", "token", "words"),
    [
        ("W:W33:B1", "33", "unknown square"),
        ("W:Wi9:B1", "i9", "unknown square"),
        ("W:Wa2:B1", "a2", "unknown square"),
        ("W:W21,21:B2", "21", "listed twice"),
        ("W:W21:B21", "21", "listed twice"),
        ("W:W5-24:B", "W5-24", "at most 12"),
        ("W:W1:B30", "1", "crowning row"),
        ("W:W21:B30", "30", "crowning row"),
        ("X:W21:B1", "X", "W or B"),
        ("W:W21", "W:W21", "three fields"),
        ("W:W21:W22", "W22", "twice"),
        ("W:W21:Q1", "Q1", "start with W or B"),
        ("W:W24-21:B1", "24-21", "backwards"),
        ("W:W21,,22:B1", "W21,,22", "empty square"),
    ],
)
def test_bad_fen_names_the_token(fen: str, token: str, words: str) -> None:
    with pytest.raises(InvalidFenError, match=words) as caught:
        Position.from_fen(fen)
    assert caught.value.token == token


@st.composite
def positions(draw: st.DrawFn) -> Position:
    """Random legal-looking positions: up to 12 a side, no man on its own crowning row."""
    squares = draw(st.permutations(range(1, 33)))
    white_count = draw(st.integers(0, 12))
    black_count = draw(st.integers(0, 12))
    white_squares = squares[:white_count]
    black_squares = squares[white_count : white_count + black_count]
    kings = 0
    white = black = 0
    for square in white_squares:
        bit = BIT_OF_SQUARE[square]
        white |= bit
        if bit & ROW_BITS[0] or draw(st.booleans()):
            kings |= bit
    for square in black_squares:
        bit = BIT_OF_SQUARE[square]
        black |= bit
        if bit & ROW_BITS[7] or draw(st.booleans()):
            kings |= bit
    variant = draw(st.sampled_from(["english", "russian"]))
    turn = draw(st.sampled_from(list(Color)))
    return Position.from_fen(
        Position(Position.initial(variant).variant, white, black, kings, turn).fen(), variant
    )


@given(positions())
def test_fen_round_trip(position: Position) -> None:
    assert position.is_valid()
    again = Position.from_fen(position.fen(), position.variant)
    assert again == position
    assert again.fen() == position.fen()
    assert eval(repr(position)) == position
