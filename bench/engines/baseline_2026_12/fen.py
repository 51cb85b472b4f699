"""PDN FEN: ``T:W<squares>:B<squares>``, with ``K`` before kings and ranges such as ``21-32``.

>>> board = parse_fen("B:W18,24,27,28,K10,K15:B12,16,20,K22,K25,K29")
>>> board.turn.letter, len(squares_of(board.white)), len(squares_of(board.kings))
('B', 6, 5)
>>> format_fen(parse_fen("B:W21-32:B1-12"), algebraic=False)
'B:W21-32:B1-12'
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from .color import Color
from .errors import InvalidFenError
from .squares import (
    BIT_OF_SQUARE,
    BLACK_CROWN_ROW,
    WHITE_CROWN_ROW,
    Square,
    parse_square,
    square_name,
    squares_of,
)

MAX_PIECES_PER_SIDE = 12


class Board(NamedTuple):
    """The pieces and the side to move, as bitboards in the engine's layout."""

    white: int
    black: int
    kings: int
    turn: Color


def parse_fen(text: str) -> Board:
    """Read a PDN FEN; raise :class:`InvalidFenError` naming the token that is wrong.

    Squares may be numbers (1-32) or algebraic names (``a1``-``h8``), in either variant.
    """
    fen = text.strip().strip('"').strip()
    if fen.endswith("."):
        fen = fen[:-1]
    fields = [field.strip() for field in fen.split(":")]
    if len(fields) != 3:
        raise InvalidFenError(
            f"FEN {text!r} must have three fields, side:W...:B..., separated by ':'",
            token=fen,
        )
    side_text, *lists = fields
    turn_by_letter = {"W": Color.WHITE, "B": Color.BLACK}
    if side_text.upper() not in turn_by_letter:
        raise InvalidFenError(f"FEN side to move {side_text!r} must be W or B", token=side_text)
    turn = turn_by_letter[side_text.upper()]
    men: dict[Color, int] = {Color.WHITE: 0, Color.BLACK: 0}
    kings = 0
    seen_colors: set[Color] = set()
    placed: dict[int, str] = {}
    for field in lists:
        if not field or field[0].upper() not in turn_by_letter:
            raise InvalidFenError(f"FEN piece list {field!r} must start with W or B", token=field)
        color = turn_by_letter[field[0].upper()]
        if color in seen_colors:
            raise InvalidFenError(f"FEN lists {color.value} twice", token=field)
        seen_colors.add(color)
        count = 0
        for token in (t.strip() for t in field[1:].split(",")):
            if not token:
                if field[1:].strip():
                    raise InvalidFenError(f"FEN has an empty square in {field!r}", token=field)
                continue
            is_king = token[0] in "Kk"
            body = token[1:] if is_king else token
            for square in _expand(body, token):
                if square in placed:
                    raise InvalidFenError(
                        f"square {square} is listed twice in the FEN "
                        f"({placed[square]} and {token})",
                        token=token,
                    )
                placed[square] = token
                bit = BIT_OF_SQUARE[square]
                if not is_king:
                    own_crown_row = WHITE_CROWN_ROW if color is Color.WHITE else BLACK_CROWN_ROW
                    if bit & own_crown_row:
                        raise InvalidFenError(
                            f"a {color.value} man cannot stand on square {square}, its own "
                            f"crowning row (it would be a king): {token!r}",
                            token=token,
                        )
                else:
                    kings |= bit
                men[color] |= bit
                count += 1
        if count > MAX_PIECES_PER_SIDE:
            raise InvalidFenError(
                f"{color.value} has {count} pieces in the FEN; at most {MAX_PIECES_PER_SIDE}",
                token=field,
            )
    return Board(men[Color.WHITE], men[Color.BLACK], kings, turn)


def _expand(body: str, token: str) -> list[Square]:
    """The squares of one FEN token body: a square or a range ``a-b``."""
    if "-" in body:
        first_text, _, last_text = body.partition("-")
        first, last = parse_square(first_text), parse_square(last_text)
        if first is None or last is None:
            raise InvalidFenError(f"unknown square in FEN range {token!r}", token=token)
        if first > last:
            raise InvalidFenError(f"FEN range {token!r} runs backwards", token=token)
        return [Square(s) for s in range(first, last + 1)]
    square = parse_square(body)
    if square is None:
        raise InvalidFenError(
            f"unknown square {token!r} in FEN: use 1-32 or a dark square a1-h8", token=token
        )
    return [square]


# Every game view carries its start position's FEN, nearly always one of the two start
# positions: remembering the last few boards' FENs saves writing them again.
@functools.lru_cache(maxsize=64)
def format_fen(board: Board, *, algebraic: bool) -> str:
    """Write a PDN FEN; numbers with ranges, or algebraic names one by one."""
    parts = [board.turn.letter]
    for color, pieces in ((Color.WHITE, board.white), (Color.BLACK, board.black)):
        men = squares_of(pieces & ~board.kings)
        kings = squares_of(pieces & board.kings)
        if algebraic:
            tokens = [square_name(s) for s in men] + ["K" + square_name(s) for s in kings]
        else:
            tokens = _ranges(men, "") + _ranges(kings, "K")
        parts.append(color.letter + ",".join(tokens))
    return ":".join(parts)


def _ranges(squares: list[Square], prefix: str) -> list[str]:
    """Numbers with runs of three or more written as ranges: [1, 2, 3, 5] -> 1-3, 5."""
    tokens: list[str] = []
    start = 0
    while start < len(squares):
        end = start
        while end + 1 < len(squares) and squares[end + 1] == squares[end] + 1:
            end += 1
        if end - start >= 2:
            tokens.append(f"{prefix}{squares[start]}-{squares[end]}")
        else:
            tokens.extend(f"{prefix}{s}" for s in squares[start : end + 1])
        start = end + 1
    return tokens
