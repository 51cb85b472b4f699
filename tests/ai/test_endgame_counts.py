"""Position counts of the endgame tables against Chinook's published figures.

Schaeffer et al., "Checkers Is Solved" (Science 317, 2007, table 1), count the English
checkers positions with exactly n pieces on the board: 120, 6,972, 261,224, 7,092,774 and
148,688,232 for one to five pieces.  The convention that gives these numbers, found by the
brute-force count below: every placement of white and black men and kings on the 32 squares, no man
on its own crowning row, either side allowed to have no piece at all, and the side to move
not counted.  Goti's tables hold each placement with both sides present once, seen from
the side to move, so a table count plus the one-sided placements must give the figure.
"""

from __future__ import annotations

from itertools import combinations, product

import pytest

from goti.ai.endgames.indexing import Index, Material, materials
from goti.rules.color import Color
from goti.rules.position import Position
from goti.rules.squares import BIT_OF_SQUARE
from goti.rules.variants import ENGLISH

PUBLISHED = {1: 120, 2: 6_972, 3: 261_224, 4: 7_092_774, 5: 148_688_232}
_KINDS = ("white man", "white king", "black man", "black king")


def _valid(square: int, kind: str) -> bool:
    """Whether the rules allow this one piece on this square (asked of goti.rules)."""
    bit = BIT_OF_SQUARE[square]
    white = bit if kind.startswith("white") else 0
    black = bit if kind.startswith("black") else 0
    kings = bit if kind.endswith("king") else 0
    return Position(ENGLISH, white, black, kings, Color.WHITE).is_valid()


_ALLOWED = {square: [k for k in _KINDS if _valid(square, k)] for square in range(1, 33)}


def _placements(pieces: int, kinds: tuple[str, ...] = _KINDS) -> int:
    """Placements of ``pieces`` pieces of the given kinds: every square set, every kind."""
    total = 0
    for squares in combinations(range(1, 33), pieces):
        if pieces <= 3:
            choices = [[k for k in _ALLOWED[s] if k in kinds] for s in squares]
            total += sum(1 for _ in product(*choices))
        else:
            # A square's choice does not depend on the others: count the products.
            ways = 1
            for square in squares:
                ways *= sum(1 for k in _ALLOWED[square] if k in kinds)
            total += ways
    return total


@pytest.mark.parametrize("pieces", [1, 2, 3, 4, 5])
def test_brute_force_counts_match_the_published_figures(pieces: int) -> None:
    assert _placements(pieces) == PUBLISHED[pieces]


@pytest.mark.parametrize("pieces", [2, 3, 4, 5])
def test_tables_hold_every_placement_with_a_piece_on_each_side(pieces: int) -> None:
    one_sided = _placements(pieces, _KINDS[:2]) + _placements(pieces, _KINDS[2:])
    in_tables = sum(Index(m).size for m in materials(pieces) if m.pieces == pieces)
    assert in_tables + one_sided == PUBLISHED[pieces]


def test_the_index_ranks_every_placement_once_in_order() -> None:
    for material in materials(3):
        index = Index(material)
        ranks = [index.rank_sides(*sides, True) for sides in index.positions()]
        assert ranks == list(range(index.size)), material.name


def test_black_to_move_is_ranked_as_white_to_move_turned_half_a_turn() -> None:
    """White king on 22 and man on 15 against a black king on 6, White to move, is the
    board turned half a turn (square s to 33 - s) of Black king 11 and man 18 against a
    white king on 27, Black to move: the same table entry."""
    index = Index(Material(1, 1, 0, 1))
    bit = BIT_OF_SQUARE
    white_to_move = index.rank_sides(bit[22] | bit[15], bit[6], bit[22] | bit[6], True)
    black_to_move = index.rank_sides(bit[11] | bit[18], bit[27], bit[11] | bit[27], False)
    assert white_to_move == black_to_move
    assert Material.parse(Material(1, 1, 0, 1).name) == Material(1, 1, 0, 1)
