"""Materials and the perfect index: every placement of a material ranked to ``0..size-1``.

A table is seen from the side to move, which is always turned to play "up" like White: a
position with Black to move is rotated half a turn (square ``s`` becomes ``33 - s``) and its
colours swapped, which changes nothing in either variant's rules.  So one table per material
serves both colours, and a material names the mover's men and kings, then the other side's.

Squares here are numbered 0-31 (PDN square minus one).  The mover's men never stand on its
crowning row (0-3) and the other side's men never on theirs (28-31).  A placement is ranked
group by group (the mover's men, the other men, the mover's kings, the other kings), each
group as a combination in colexicographic order over the squares still free for it, so the
index is a bijection onto ``range(size)``: no gaps, nothing counted twice.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from math import comb
from typing import Final

from goti.rules.squares import BIT_OF_SQUARE

SQUARES: Final = 32
MOVER_MEN_FIRST: Final = 4
"""The mover's men stand on squares 4-31 (never on its crowning row 0-3)."""
OTHER_MEN_END: Final = 28
"""The other side's men stand on squares 0-27 (never on its crowning row 28-31)."""

BIT: Final[tuple[int, ...]] = tuple(BIT_OF_SQUARE[s + 1] for s in range(SQUARES))
"""``BIT[q]``: the bitboard of square ``q`` (0-31)."""
SQUARE_OF: Final[dict[int, int]] = {BIT[q]: q for q in range(SQUARES)}
"""A single-bit bitboard to its square 0-31, as the side to move sees it when it is White."""
ROTATED_SQUARE_OF: Final[dict[int, int]] = {BIT[q]: SQUARES - 1 - q for q in range(SQUARES)}
"""A single-bit bitboard to its square 0-31 as Black sees it: the board turned half a turn."""

_CHOOSE: Final = [[comb(n, k) for k in range(SQUARES + 1)] for n in range(SQUARES + 1)]


@dataclass(frozen=True, slots=True, order=True)
class Material:
    """Which pieces are on the board: the side to move's men and kings, then the other's."""

    mover_men: int
    mover_kings: int
    other_men: int
    other_kings: int

    @property
    def pieces(self) -> int:
        """How many pieces there are in all."""
        return self.mover_men + self.mover_kings + self.other_men + self.other_kings

    @property
    def men(self) -> int:
        """How many men there are in all (promotions only ever lower it)."""
        return self.mover_men + self.other_men

    def swapped(self) -> Material:
        """The same pieces with the other side to move."""
        return Material(self.other_men, self.other_kings, self.mover_men, self.mover_kings)

    @property
    def name(self) -> str:
        """The file stem: ``1m0k-0m2k`` is a man to move against two kings."""
        return f"{self.mover_men}m{self.mover_kings}k-{self.other_men}m{self.other_kings}k"

    @classmethod
    def parse(cls, name: str) -> Material:
        """The material of a file stem written by :attr:`name` (raises ValueError)."""
        mover, other = name.split("-")
        counts = []
        for side in (mover, other):
            men, kings = side.removesuffix("k").split("m")
            counts += [int(men), int(kings)]
        return cls(*counts)

    @classmethod
    def of(cls, mine: int, theirs: int, kings: int) -> Material:
        """The material of side-relative bitboards (``mine`` is the side to move)."""
        mover_kings = (mine & kings).bit_count()
        other_kings = (theirs & kings).bit_count()
        return cls(
            mine.bit_count() - mover_kings,
            mover_kings,
            theirs.bit_count() - other_kings,
            other_kings,
        )


def materials(max_pieces: int) -> list[Material]:
    """Every material of 2 to ``max_pieces`` pieces with a piece on each side, in build order.

    A table's moves lead to fewer pieces (a capture), fewer men (a promotion) or the same
    material with the sides swapped, so ordering by (pieces, men) puts every table after the
    tables its exits reach; a material and its swap sort side by side and are solved together.
    """
    found = []
    for pieces in range(2, max_pieces + 1):
        for mover in range(1, pieces):
            for mover_men in range(mover + 1):
                for other_men in range(pieces - mover + 1):
                    found.append(
                        Material(
                            mover_men, mover - mover_men, other_men, pieces - mover - other_men
                        )
                    )
    return sorted(found, key=lambda m: (m.pieces, m.men, min(m, m.swapped()), m))


def _colex(size: int, count: int) -> Iterator[tuple[int, ...]]:
    """The ``count``-element subsets of ``range(size)`` in colexicographic (rank) order."""
    if count == 0:
        yield ()
        return
    for top in range(count - 1, size):
        for rest in _colex(top, count - 1):
            yield (*rest, top)


class Index:
    """The perfect index of one material's placements."""

    def __init__(self, material: Material) -> None:
        self.material = material
        men, other_men = material.mover_men, material.other_men
        free = SQUARES - men - other_men
        self.mover_king_ways = _CHOOSE[free][material.mover_kings]
        self.other_king_ways = _CHOOSE[free - material.mover_kings][material.other_kings]
        # Where the other side's men may go depends on how many of the mover's men stand on
        # rows they share, so the men's part is a running sum over the mover's men placements.
        offsets = []
        total = 0
        for placement in _colex(SQUARES - MOVER_MEN_FIRST, men):
            offsets.append(total)
            shared = sum(1 for p in placement if p + MOVER_MEN_FIRST < OTHER_MEN_END)
            total += _CHOOSE[OTHER_MEN_END - shared][other_men]
        self._men_offsets = offsets
        self.men_placements = total
        self.size = total * self.mover_king_ways * self.other_king_ways

    def rank(
        self,
        mover_men: list[int],
        other_men: list[int],
        mover_kings: list[int],
        other_kings: list[int],
    ) -> int:
        """The index of a placement given as ascending squares 0-31, group by group."""
        choose = _CHOOSE
        rank = 0
        for i, square in enumerate(mover_men):
            rank += choose[square - MOVER_MEN_FIRST][i + 1]
        men_rank = self._men_offsets[rank]
        for i, square in enumerate(other_men):
            below = 0
            for mover in mover_men:
                if mover < square:
                    below += 1
            men_rank += choose[square - below][i + 1]
        taken = mover_men + other_men
        first = 0
        for i, square in enumerate(mover_kings):
            below = 0
            for piece in taken:
                if piece < square:
                    below += 1
            first += choose[square - below][i + 1]
        taken = taken + mover_kings
        second = 0
        for i, square in enumerate(other_kings):
            below = 0
            for piece in taken:
                if piece < square:
                    below += 1
            second += choose[square - below][i + 1]
        return (men_rank * self.mover_king_ways + first) * self.other_king_ways + second

    def rank_sides(self, mine: int, theirs: int, kings: int, white: bool) -> int:
        """The index of side-relative bitboards (``mine`` moves; ``white`` says which it is)."""
        square_of = SQUARE_OF if white else ROTATED_SQUARE_OF
        groups = []
        for bits in (mine & ~kings, theirs & ~kings, mine & kings, theirs & kings):
            squares = []
            while bits:
                low = bits & -bits
                squares.append(square_of[low])
                bits ^= low
            if not white:
                squares.reverse()
            groups.append(squares)
        return self.rank(*groups)

    @cached_property
    def _men_placements(self) -> list[tuple[int, int]]:
        material = self.material
        found = []
        for mover in _colex(SQUARES - MOVER_MEN_FIRST, material.mover_men):
            mover_bits = sum(BIT[p + MOVER_MEN_FIRST] for p in mover)
            left = [q for q in range(OTHER_MEN_END) if not BIT[q] & mover_bits]
            for other in _colex(len(left), material.other_men):
                found.append((mover_bits, sum(BIT[left[p]] for p in other)))
        return found

    def positions(self) -> Iterator[tuple[int, int, int]]:
        """Every placement as ``(mine, theirs, kings)`` bitboards, in index order.

        ``mine`` is the side to move, seen as White (its men move towards square 1).
        """
        material = self.material
        for mover_men, other_men in self._men_placements:
            men = mover_men | other_men
            free = [BIT[q] for q in range(SQUARES) if not BIT[q] & men]
            for first in _colex(len(free), material.mover_kings):
                mover_kings = sum(free[p] for p in first)
                rest = [bit for bit in free if not bit & mover_kings]
                mine = mover_men | mover_kings
                for second in _colex(len(rest), material.other_kings):
                    other_kings = sum(rest[p] for p in second)
                    yield mine, other_men | other_kings, mover_kings | other_kings
