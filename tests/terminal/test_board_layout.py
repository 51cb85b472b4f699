"""Where squares sit on screen from each seat, the labels round the board, and the keyboard
cursor walking the dark squares."""

from __future__ import annotations

import pytest

from goti.rules import ENGLISH, RUSSIAN, Color, Square
from goti.rules.squares import SQUARES
from goti_client.terminal.board_layout import SIZE, BoardCursor, BoardLayout, Direction


@pytest.mark.parametrize("bottom", list(Color))
def test_every_playable_square_has_one_dark_cell_and_back(bottom: Color) -> None:
    layout = BoardLayout(bottom)
    cells = {layout.cell(square) for square in SQUARES}
    assert len(cells) == 32
    for square in SQUARES:
        assert layout.square_at(*layout.cell(square)) == square
    dark = [(r, c) for r in range(SIZE) for c in range(SIZE) if layout.is_dark(r, c)]
    assert sorted(dark) == sorted(cells)
    assert layout.square_at(-1, 0) is None
    assert layout.square_at(0, SIZE) is None


def test_each_side_starts_at_the_bottom_of_its_own_view() -> None:
    white, black = BoardLayout(Color.WHITE), BoardLayout(Color.BLACK)
    # White's men start on 21-32, Black's on 1-12.
    assert {white.cell(Square(s))[0] for s in range(21, 33)} == {5, 6, 7}
    assert {black.cell(Square(s))[0] for s in range(1, 13)} == {5, 6, 7}
    # The board keeps a dark square in each player's bottom-left corner.
    assert white.square_at(7, 0) == 29
    assert black.square_at(7, 0) == 4


def test_english_rows_carry_their_outer_square_numbers() -> None:
    labels = BoardLayout(Color.WHITE).row_labels(ENGLISH)
    assert labels[0] == ("1", "4")
    assert labels[7] == ("29", "32")
    assert BoardLayout(Color.BLACK).row_labels(ENGLISH)[0] == ("32", "29")
    assert BoardLayout(Color.WHITE).column_labels(ENGLISH) == [""] * SIZE


def test_russian_edges_carry_files_and_ranks() -> None:
    assert BoardLayout(Color.WHITE).column_labels(RUSSIAN) == list("abcdefgh")
    assert BoardLayout(Color.BLACK).column_labels(RUSSIAN) == list("hgfedcba")
    assert BoardLayout(Color.WHITE).row_labels(RUSSIAN)[0] == ("8", "8")
    assert BoardLayout(Color.BLACK).row_labels(RUSSIAN)[0] == ("1", "1")


def test_the_cursor_walks_straight_up_and_along_rows() -> None:
    layout = BoardLayout(Color.WHITE)
    cursor = BoardCursor(layout, Square(30))  # c1
    columns = {layout.cell(cursor.move(Direction.UP))[1] for _ in range(7)}
    # Up the board it zigzags between two neighbouring columns, never drifting away.
    assert columns <= {1, 2, 3}
    assert layout.cell(cursor.square)[0] == 0
    assert cursor.move(Direction.UP) == cursor.square
    start = cursor.square
    cursor.move(Direction.RIGHT)
    assert layout.cell(cursor.square)[1] == layout.cell(start)[1] + 2
    for _ in range(5):
        cursor.move(Direction.RIGHT)
    assert layout.cell(cursor.square)[1] in (6, 7)


def test_a_copied_cursor_moves_like_the_original() -> None:
    cursor = BoardCursor(BoardLayout(Color.BLACK), Square(9))
    cursor.move(Direction.LEFT)
    twin = cursor.copy()
    for direction in (Direction.UP, Direction.UP, Direction.DOWN, Direction.RIGHT):
        assert twin.move(direction) == cursor.move(direction)
