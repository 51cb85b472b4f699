"""The 32 playable squares, their names, and the bit layout the engine computes with.

Squares are numbered 1-32 as in PDN and the checkers books: square 1 is b8, square 4 is h8,
square 29 is a1 and square 32 is g1.  White men start on 21-32 and are crowned on 1-4;
Black men start on 1-12 and are crowned on 29-32, in both variants.

Internally a set of squares is a Python int over a 35-bit "padded" layout: square ``s`` in
row ``r`` (0 = rank 8) sits at bit ``s - 1 + r // 2``, which leaves bits 8, 17 and 26 unused.
With those three ghost bits every diagonal step is the same shift on every row: +4 and +5
towards rank 1, -4 and -5 towards rank 8, and a step off the side of the board lands on a
ghost bit or outside the board, never on a real square.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, NewType

Square = NewType("Square", int)
"""A playable square, 1-32 (PDN numbering)."""

SQUARES: Final = tuple(Square(s) for s in range(1, 33))

GHOST_BITS: Final = (8, 17, 26)
BOARD: Final = sum(1 << (s - 1 + (s - 1) // 8) for s in range(1, 33))
"""Every playable square as a bitboard."""

# Diagonal steps as signed shifts: positive shifts move towards rank 1 (Black's forward),
# negative towards rank 8 (White's forward).
DOWN_LEFT: Final = 4
DOWN_RIGHT: Final = 5
UP_RIGHT: Final = -4
UP_LEFT: Final = -5
DIRECTIONS: Final = (DOWN_LEFT, DOWN_RIGHT, UP_RIGHT, UP_LEFT)

BIT_OF_SQUARE: Final[tuple[int, ...]] = (0, *(1 << (s - 1 + (s - 1) // 8) for s in range(1, 33)))
"""``BIT_OF_SQUARE[s]`` is the single-bit bitboard of square ``s`` (index 0 unused)."""

SQUARE_OF_BIT: Final[dict[int, Square]] = {BIT_OF_SQUARE[s]: Square(s) for s in range(1, 33)}
"""The inverse of ``BIT_OF_SQUARE``: a single-bit bitboard to its square."""

ROW_BITS: Final = tuple(
    sum(BIT_OF_SQUARE[s] for s in range(4 * r + 1, 4 * r + 5)) for r in range(8)
)
"""``ROW_BITS[r]`` is the bitboard of row ``r`` (0 = rank 8, 7 = rank 1)."""

WHITE_CROWN_ROW: Final = ROW_BITS[0]
BLACK_CROWN_ROW: Final = ROW_BITS[7]

_FILES: Final = "abcdefgh"


def square_name(square: int) -> str:
    """The algebraic name of a square (``29`` -> ``'a1'``, ``1`` -> ``'b8'``)."""
    if 1 <= square <= 32:
        return _NAMES[square]
    return _name(square)


def _name(square: int) -> str:
    row, index = divmod(square - 1, 4)
    file = 2 * index + (1 if row % 2 == 0 else 0)
    return f"{_FILES[file]}{8 - row}"


# Russian notation names every square of every legal move a game view lists: look them up.
_NAMES: Final = ("", *(_name(s) for s in range(1, 33)))

ALGEBRAIC: Final[dict[str, Square]] = {square_name(s): Square(s) for s in range(1, 33)}
"""Algebraic names of the 32 dark squares to their numbers (``'c3'`` -> ``22``)."""


def parse_square(token: str) -> Square | None:
    """A square from ``'22'`` or ``'c3'``; None when the token names no playable square."""
    token = token.strip().lower()
    # isdigit() alone also passes digits int() cannot read, such as '²'.
    if token.isascii() and token.isdigit():
        number = int(token)
        return Square(number) if 1 <= number <= 32 else None
    return ALGEBRAIC.get(token)


def squares_of(bitboard: int) -> list[Square]:
    """The squares set in a bitboard, in ascending order."""
    found = []
    while bitboard:
        low = bitboard & -bitboard
        found.append(SQUARE_OF_BIT[low])
        bitboard ^= low
    return found


def bitboard_of(squares: Iterable[int]) -> int:
    """The bitboard of an iterable of squares."""
    board = 0
    for square in squares:
        board |= BIT_OF_SQUARE[square]
    return board


def shift(bits: int, step: int) -> int:
    """Move every bit of ``bits`` one diagonal step (a signed shift from ``DIRECTIONS``)."""
    return bits << step if step > 0 else bits >> -step


def to_square_mask(bitboard: int) -> int:
    """A bitboard as a 32-bit mask with bit ``s - 1`` for square ``s`` (the wire format)."""
    return (
        (bitboard & 0xFF)
        | ((bitboard >> 1) & 0xFF00)
        | ((bitboard >> 2) & 0xFF0000)
        | ((bitboard >> 3) & 0xFF000000)
    )


def from_square_mask(mask: int) -> int:
    """The bitboard of a 32-bit square mask (bit ``s - 1`` for square ``s``)."""
    return (
        (mask & 0xFF)
        | ((mask & 0xFF00) << 1)
        | ((mask & 0xFF0000) << 2)
        | ((mask & 0xFF000000) << 3)
    )
