"""A position: the pieces, the side to move and the variant, immutable and hashable."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from goti.rules import movegen
from goti.rules.color import Color
from goti.rules.errors import (
    AmbiguousMoveError,
    IllegalMoveError,
    IllegalReason,
    InvalidMoveError,
)
from goti.rules.fen import Board, format_fen, parse_fen
from goti.rules.moves import Move
from goti.rules.squares import (
    BIT_OF_SQUARE,
    BOARD,
    ROW_BITS,
    SQUARE_OF_BIT,
    Square,
    parse_square,
    squares_of,
)
from goti.rules.variants import ENGLISH, Variant, find_variant

_START_WHITE = sum(BIT_OF_SQUARE[s] for s in range(21, 33))
_START_BLACK = sum(BIT_OF_SQUARE[s] for s in range(1, 13))
_MOVE_TEXT = re.compile(r"^\s*([a-h]?\d{1,2})((?:\s*[-x:]\s*[a-h]?\d{1,2})+)\s*[!?+#]*\s*$", re.I)
_SEPARATOR = re.compile(r"\s*[-x:]\s*", re.I)


class Piece(NamedTuple):
    """A piece on the board."""

    color: Color
    king: bool


@dataclass(frozen=True, slots=True)
class Position:
    """The pieces on the board and the side to move, under one variant's rules.

    ``white``, ``black`` and ``kings`` are bitboards in the layout of
    :mod:`goti.rules.squares`; build positions with :meth:`initial` or :meth:`from_fen`.

    >>> position = Position.initial()
    >>> len(position.legal_moves)
    7
    >>> position.push(position.parse_move("11-15")).fen()
    'W:W21-32:B1-10,12,15'
    """

    variant: Variant
    white: int
    black: int
    kings: int
    turn: Color
    _raw_moves: list[movegen.RawMove] | None = field(
        default=None, compare=False, hash=False, repr=False
    )

    @classmethod
    def initial(cls, variant: Variant | str = ENGLISH) -> Position:
        """The start position of a variant."""
        rules = find_variant(variant) if isinstance(variant, str) else variant
        return cls(rules, _START_WHITE, _START_BLACK, 0, rules.first_to_move)

    @classmethod
    def from_fen(cls, fen: str, variant: Variant | str = ENGLISH) -> Position:
        """A position from PDN FEN (raises :class:`~goti.rules.errors.InvalidFenError`)."""
        rules = find_variant(variant) if isinstance(variant, str) else variant
        board = parse_fen(fen)
        return cls(rules, board.white, board.black, board.kings, board.turn)

    def fen(self) -> str:
        """PDN FEN: numbers with ranges for English, algebraic squares for Russian."""
        board = Board(self.white, self.black, self.kings, self.turn)
        return format_fen(board, algebraic=self.variant.algebraic)

    def __repr__(self) -> str:
        return f"Position.from_fen({self.fen()!r}, {self.variant.name!r})"

    def __reduce__(self) -> tuple[type[Position], tuple[Variant, int, int, int, Color]]:
        # Pickled as the constructor's arguments, without the cached moves: compiled by mypyc,
        # a frozen class refuses to be restored field by field.
        return Position, (self.variant, self.white, self.black, self.kings, self.turn)

    def __str__(self) -> str:
        """The board as text, rank 8 at the top: ``b``/``w`` men, ``B``/``W`` kings."""
        lines = []
        for row in range(8):
            cells = []
            for index in range(4):
                square = Square(4 * row + index + 1)
                piece = self.piece_at(square)
                mark = "." if piece is None else piece.color.letter
                if piece is not None and not piece.king:
                    mark = mark.lower()
                cells.extend([" ", mark] if row % 2 == 0 else [mark, " "])
            lines.append(" ".join(cells))
        return "\n".join(lines)

    # -- the pieces -------------------------------------------------------------------

    @property
    def white_to_move(self) -> bool:
        """Whether White is to move."""
        return self.turn is Color.WHITE

    def sides(self) -> tuple[int, int]:
        """``(pieces of the side to move, pieces of the other side)`` as bitboards."""
        if self.turn is Color.WHITE:
            return self.white, self.black
        return self.black, self.white

    def pieces(self, color: Color) -> int:
        """The bitboard of one side's pieces."""
        return self.white if color is Color.WHITE else self.black

    def piece_at(self, square: int) -> Piece | None:
        """The piece on a square, if any."""
        bit = BIT_OF_SQUARE[square]
        if self.white & bit:
            return Piece(Color.WHITE, bool(self.kings & bit))
        if self.black & bit:
            return Piece(Color.BLACK, bool(self.kings & bit))
        return None

    def count(self, color: Color, *, kings: bool | None = None) -> int:
        """How many pieces a side has (only kings, only men, or both when ``kings`` is None)."""
        pieces = self.pieces(color)
        if kings is True:
            pieces &= self.kings
        elif kings is False:
            pieces &= ~self.kings
        return pieces.bit_count()

    def is_valid(self) -> bool:
        """Whether the bitboards describe a position the rules allow.

        No overlap, nothing off the 32 squares, kings only where there is a piece, at most 12
        pieces a side, and no man on its own crowning row.
        """
        if (self.white | self.black | self.kings) & ~BOARD:
            return False
        if self.white & self.black or self.kings & ~(self.white | self.black):
            return False
        if self.white.bit_count() > 12 or self.black.bit_count() > 12:
            return False
        men = ~self.kings
        return not (self.white & men & ROW_BITS[0] or self.black & men & ROW_BITS[7])

    # -- moves --------------------------------------------------------------------------

    def raw_moves(self) -> list[movegen.RawMove]:
        """The legal moves as engine tuples (see :mod:`goti.rules.movegen`); cached."""
        if self._raw_moves is None:
            mine, theirs = self.sides()
            variant = self.variant
            white = self.turn is Color.WHITE
            moves = movegen.captures(
                mine,
                theirs,
                self.kings,
                white,
                variant.men_capture_backwards,
                variant.flying_kings,
                variant.crowning_ends_capture,
            )
            if not moves:
                moves = movegen.quiet_moves(mine, theirs, self.kings, white, variant.flying_kings)
            object.__setattr__(self, "_raw_moves", moves)
            return moves
        return self._raw_moves

    @property
    def legal_moves(self) -> LegalMoves:
        """The legal moves: a lazy view that iterates, counts and tests membership."""
        return LegalMoves(self)

    @property
    def must_capture(self) -> list[Square]:
        """The squares of the pieces that can capture (one of them must); empty if none can."""
        mine, theirs = self.sides()
        variant = self.variant
        return squares_of(
            movegen.capturers(
                mine,
                theirs,
                self.kings,
                self.turn is Color.WHITE,
                variant.men_capture_backwards,
                variant.flying_kings,
            )
        )

    def push(self, move: Move) -> Position:
        """The position after a legal move (raises :class:`IllegalMoveError` otherwise)."""
        return self._play(self._raw_for(move))

    def _raw_for(self, move: Move) -> movegen.RawMove:
        for raw in self.raw_moves():
            if _move_of(raw) == move:
                return raw
        raise self._illegal(move.path)

    def _play(self, raw: movegen.RawMove) -> Position:
        mine, theirs = self.sides()
        mine, theirs, kings = movegen.play(mine, theirs, self.kings, raw)
        if self.turn is Color.WHITE:
            return Position(self.variant, mine, theirs, kings, Color.BLACK)
        return Position(self.variant, theirs, mine, kings, Color.WHITE)

    def notation(self, move: Move) -> str:
        """A move in this variant's standard notation."""
        return move.notation(self.variant)

    def find_move(self, path: Sequence[int]) -> Move:
        """The legal move with this path of squares.

        A path that leaves out landing squares (``22, 8`` for ``22x15x8``) is taken when it
        names exactly one legal move.  Raises :class:`IllegalMoveError` when it names none
        and :class:`AmbiguousMoveError` when it names several.
        """
        if len(path) < 2:
            raise InvalidMoveError("a move needs at least two squares: where from and where to")
        for square in path:
            if not 1 <= square <= 32:
                raise InvalidMoveError(f"square {square} does not exist: squares are 1-32")
        moves = list(self.legal_moves)
        wanted = tuple(path)
        for move in moves:
            if move.path == wanted:
                return move
        candidates = [move for move in moves if _abbreviates(wanted, move.path)]
        if len(candidates) == 1:
            return candidates[0]
        if candidates:
            names = [self.notation(move) for move in candidates]
            raise AmbiguousMoveError(
                f"{self._path_text(wanted)} could be {_or_list(names)}: give every landing square",
                candidates=names,
            )
        raise self._illegal(wanted)

    def parse_move(self, text: str) -> Move:
        """The legal move written as ``text`` (``11-15``, ``22x15x8``, ``c3:e5``, ``22x8``).

        Raises :class:`InvalidMoveError` for text that is not a move,
        :class:`IllegalMoveError` for a move not allowed here and
        :class:`AmbiguousMoveError` for a short capture that fits several moves.
        """
        match = _MOVE_TEXT.match(text)
        if match is None:
            raise InvalidMoveError(
                f"{text!r} is not a move: write squares joined by '-' for a step or by "
                f"'{self.variant.capture_separator}' for a capture, like "
                f"{self._example_move_text()}"
            )
        tokens = [match.group(1), *_SEPARATOR.split(match.group(2).strip())[1:]]
        path = []
        for token in tokens:
            square = parse_square(token)
            if square is None:
                raise InvalidMoveError(
                    f"{token!r} in {text!r} is not a playable square: "
                    "use 1-32 or a dark square a1-h8"
                )
            path.append(square)
        return self.find_move(path)

    def _example_move_text(self) -> str:
        return "'c3-d4' or 'c3:e5'" if self.variant.algebraic else "'11-15' or '22x15'"

    def _path_text(self, path: Sequence[int]) -> str:
        return Move(tuple(Square(s) for s in path)).notation(self.variant)

    def _illegal(self, path: Sequence[int]) -> IllegalMoveError:
        moves = list(self.legal_moves)
        names = [self.notation(move) for move in moves]
        written = self._path_text(path)
        if not moves:
            return IllegalMoveError(
                f"{written} is not possible: {self.turn.value} has no legal move",
                reason=IllegalReason.ILLEGAL_MOVE,
            )
        if moves[0].is_capture:
            if any(move.path[: len(path)] == tuple(path) for move in moves):
                return IllegalMoveError(
                    f"{written} stops too early: the capture must go on, as in {_or_list(names)}",
                    reason=IllegalReason.INCOMPLETE_CAPTURE,
                    legal=names,
                )
            return IllegalMoveError(
                f"a capture is compulsory: {_or_list(names)}",
                reason=IllegalReason.CAPTURE_REQUIRED,
                legal=names,
            )
        return IllegalMoveError(
            f"{written} is not a legal move here; legal moves: {', '.join(names)}",
            reason=IllegalReason.ILLEGAL_MOVE,
            legal=names,
        )


class LegalMoves:
    """The legal moves of a position, generated once and viewed as :class:`Move` objects."""

    __slots__ = ("_position",)

    def __init__(self, position: Position) -> None:
        self._position = position

    def __iter__(self) -> Iterator[Move]:
        return map(_move_of, self._position.raw_moves())

    def __len__(self) -> int:
        return len(self._position.raw_moves())

    def count(self) -> int:
        """How many legal moves there are (every capture order counted)."""
        return len(self)

    def __bool__(self) -> bool:
        return bool(self._position.raw_moves())

    def __contains__(self, move: object) -> bool:
        return isinstance(move, Move) and any(
            _move_of(raw) == move for raw in self._position.raw_moves()
        )

    def unique(self) -> list[Move]:
        """One move per distinct result: capture orders that take the same pieces from the
        same square to the same square count once (the "drop duplicates" convention)."""
        kept: dict[tuple[int, int, int, bool], Move] = {}
        for raw in self._position.raw_moves():
            kept.setdefault((raw[0], raw[1], raw[2], raw[3]), _move_of(raw))
        return list(kept.values())

    def __repr__(self) -> str:
        names = ", ".join(self._position.notation(move) for move in self)
        return f"<LegalMoves ({names})>"


def _move_of(raw: movegen.RawMove) -> Move:
    origin, target, _, crowns, path, order = raw
    if path:
        return Move(
            tuple(SQUARE_OF_BIT[bit] for bit in path),
            tuple(SQUARE_OF_BIT[bit] for bit in order),
            crowns,
        )
    return Move((SQUARE_OF_BIT[origin], SQUARE_OF_BIT[target]), (), crowns)


def _abbreviates(short: tuple[int, ...], full: tuple[Square, ...]) -> bool:
    """Whether ``short`` keeps ``full``'s first and last squares and a subsequence between."""
    if short[0] != full[0] or short[-1] != full[-1]:
        return False
    position = 1
    for square in short[1:-1]:
        try:
            position = full.index(Square(square), position, len(full) - 1) + 1
        except ValueError:
            return False
    return True


def _or_list(names: Iterable[str]) -> str:
    items = list(names)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]
