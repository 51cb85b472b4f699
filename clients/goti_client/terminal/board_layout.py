"""Where the squares sit on screen, the labels round the board, and the keyboard cursor.

The board is drawn from one side's seat: that side's pieces start at the bottom.  White sits
at the bottom of the usual diagram (square 1 at b8, top left); a player of Black sees it
turned half round.

>>> layout = BoardLayout(Color.WHITE)
>>> layout.cell(Square(1)), layout.cell(Square(29))
((0, 1), (7, 0))
>>> BoardLayout(Color.BLACK).cell(Square(1))
(7, 6)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from goti.rules import Color, Square, Variant, square_name
from goti.rules.squares import ALGEBRAIC

SIZE = 8
FILES = "abcdefgh"


class Direction(enum.Enum):
    """A cursor step on screen."""

    UP = "up"
    DOWN = "down"
    LEFT = "left"
    RIGHT = "right"


@dataclass(frozen=True, slots=True)
class BoardLayout:
    """The board as seen from ``bottom``'s seat: rows 0-7 top to bottom, columns 0-7 left to
    right."""

    bottom: Color

    def cell(self, square: Square) -> tuple[int, int]:
        """The (row, column) on screen of a playable square."""
        name = square_name(square)
        column = FILES.index(name[0])
        row = SIZE - int(name[1:])
        if self.bottom is Color.BLACK:
            return SIZE - 1 - row, SIZE - 1 - column
        return row, column

    def square_at(self, row: int, column: int) -> Square | None:
        """The playable square at (row, column) on screen; None for a light square or a
        place off the board."""
        if not (0 <= row < SIZE and 0 <= column < SIZE):
            return None
        if self.bottom is Color.BLACK:
            row, column = SIZE - 1 - row, SIZE - 1 - column
        return ALGEBRAIC.get(f"{FILES[column]}{SIZE - row}")

    def is_dark(self, row: int, column: int) -> bool:
        """Whether (row, column) is a playable square."""
        return self.square_at(row, column) is not None

    def row_labels(self, variant: Variant) -> list[tuple[str, str]]:
        """The (left, right) label of each screen row: ranks for algebraic variants, else the
        numbers of the row's outermost squares."""
        labels = []
        for row in range(SIZE):
            squares = [self.square_at(row, column) for column in range(SIZE)]
            playable = [square for square in squares if square is not None]
            if variant.algebraic:
                rank = square_name(playable[0])[1:]
                labels.append((rank, rank))
            else:
                labels.append((str(playable[0]), str(playable[-1])))
        return labels

    def column_labels(self, variant: Variant) -> list[str]:
        """The label under each screen column: files for algebraic variants, else none."""
        if not variant.algebraic:
            return [""] * SIZE
        files = FILES if self.bottom is Color.WHITE else FILES[::-1]
        return list(files)


class BoardCursor:
    """The keyboard's place on the board: always a playable square.

    Left and right step two columns along the row; up and down step one row and stay in the
    same column band, zigzagging round the column the cursor last moved sideways to, so that
    holding a key goes straight up the board rather than drifting along a diagonal.
    """

    def __init__(self, layout: BoardLayout, square: Square) -> None:
        self.layout = layout
        self.square = square
        self._band = self._column() + 0.5

    def copy(self) -> BoardCursor:
        """A cursor at the same place that will move the same way."""
        twin = BoardCursor(self.layout, self.square)
        twin._band = self._band
        return twin

    def _column(self) -> int:
        return self.layout.cell(self.square)[1]

    def place(self, square: Square) -> None:
        """Put the cursor on ``square``."""
        self.square = square
        self._band = self._column() + 0.5

    def move(self, direction: Direction) -> Square:
        """Step once; the cursor stays put at the edge of the board."""
        row, column = self.layout.cell(self.square)
        if direction in (Direction.LEFT, Direction.RIGHT):
            step = -2 if direction is Direction.LEFT else 2
            square = self.layout.square_at(row, column + step)
            if square is not None:
                self.place(square)
            return self.square
        next_row = row - 1 if direction is Direction.UP else row + 1
        options = [
            (abs(candidate - self._band), candidate)
            for candidate in (column - 1, column + 1)
            if self.layout.is_dark(next_row, candidate)
        ]
        if options:
            _, best = min(options)
            found = self.layout.square_at(next_row, best)
            assert found is not None
            self.square = found
        return self.square
