"""Entering a move square by square, over the legal moves the server sent.

The player picks a piece, then each landing square in turn.  A multiple jump is entered one
landing at a time and finishes by itself as soon as only one way is left; choosing a square
that is neither a landing square nor another piece that can move drops the selection.  When
only one piece can move it is picked from the start.

>>> from goti.rules import Position
>>> entry = MoveEntry(Position.initial().legal_moves)
>>> entry.choose(Square(11)).step, sorted(entry.targets)
(<EntryStep.SELECTED: 'selected'>, [15, 16])
>>> result = entry.choose(Square(15))
>>> result.step, result.move.path if result.move else None
(<EntryStep.COMPLETED: 'completed'>, (11, 15))
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from goti.rules import Move, Square


class EntryStep(enum.Enum):
    """What choosing a square did."""

    SELECTED = "selected"
    """A piece that can move was picked (or replaced the one picked before)."""
    EXTENDED = "extended"
    """A landing square was added to a multiple jump that has more than one way on."""
    COMPLETED = "completed"
    """The move is whole: play it."""
    CANCELLED = "cancelled"
    """The selection was dropped."""
    IGNORED = "ignored"
    """Nothing changed: the square holds no piece that can move and nothing was picked."""


@dataclass(frozen=True, slots=True)
class EntryResult:
    """The step taken, and the move when the step completed one."""

    step: EntryStep
    move: Move | None = None


class MoveEntry:
    """The selection on the board while the player enters one move.

    Built from the legal moves of the side to move; a new turn gets a new entry.  The path
    chosen so far starts with the picked piece's square and lists each landing square.
    """

    def __init__(self, legal_moves: Iterable[Move]) -> None:
        self._moves = tuple(legal_moves)
        self._movable = frozenset(move.origin for move in self._moves)
        self._path: tuple[Square, ...] = ()
        self._restart()

    @property
    def legal_moves(self) -> tuple[Move, ...]:
        """Every move the player may enter."""
        return self._moves

    @property
    def movable(self) -> frozenset[Square]:
        """The squares of the pieces that can move (all of them must capture, when any
        capture is possible: the server sends only captures then)."""
        return self._movable

    @property
    def forced_piece(self) -> Square | None:
        """The only piece that can move, when just one can: it stays picked."""
        if len(self._movable) == 1:
            return next(iter(self._movable))
        return None

    @property
    def path(self) -> tuple[Square, ...]:
        """The picked piece's square and the landing squares chosen since; empty when no
        piece is picked."""
        return self._path

    @property
    def selected(self) -> Square | None:
        """The picked piece's square."""
        return self._path[0] if self._path else None

    @property
    def candidates(self) -> tuple[Move, ...]:
        """The legal moves that go the way chosen so far (all of them before a pick)."""
        return tuple(move for move in self._moves if _continues(move.path, self._path))

    @property
    def targets(self) -> frozenset[Square]:
        """The squares the picked piece may land on next; empty before a pick."""
        if not self._path:
            return frozenset()
        depth = len(self._path)
        return frozenset(move.path[depth] for move in self.candidates if len(move.path) > depth)

    @property
    def jumped(self) -> tuple[Square, ...]:
        """The pieces captured by the landings chosen so far, in order."""
        jumps = len(self._path) - 1
        candidates = self.candidates
        if jumps <= 0 or not candidates or not candidates[0].captured:
            return ()
        return candidates[0].captured[:jumps]

    def choose(self, square: Square) -> EntryResult:
        """Choose a square: pick a piece, land on a square, or drop the selection."""
        if square in self.targets:
            return self._land(square)
        if square in self._movable and square != self.selected:
            self._path = (square,)
            return EntryResult(EntryStep.SELECTED)
        if square == self.selected and len(self._path) == 1:
            # A second choice of the picked piece lets it go, unless it is the only one.
            return self.cancel()
        if not self._path:
            return EntryResult(EntryStep.IGNORED)
        return self.cancel()

    def cancel(self) -> EntryResult:
        """Drop the selection (the only piece that can move stays picked)."""
        before = self._path
        self._restart()
        if self._path == before:
            return EntryResult(EntryStep.IGNORED)
        return EntryResult(EntryStep.CANCELLED)

    def _land(self, square: Square) -> EntryResult:
        self._path = (*self._path, square)
        candidates = self.candidates
        ways = {move.path for move in candidates}
        whole = [move for move in candidates if move.path == self._path]
        if len(ways) == 1 or whole:
            move = whole[0] if whole else candidates[0]
            self._restart()
            return EntryResult(EntryStep.COMPLETED, move)
        return EntryResult(EntryStep.EXTENDED)

    def _restart(self) -> None:
        forced = self.forced_piece
        self._path = (forced,) if forced is not None else ()


def _continues(path: tuple[Square, ...], chosen: tuple[Square, ...]) -> bool:
    return path[: len(chosen)] == chosen
