"""The static evaluation: how good a position looks to the side to move, in hundredths of a man.

The search calls :func:`evaluate` at every leaf, so it is written for speed on the padded
bitboards of :mod:`goti.rules.squares`.  Square tables are stored as bit planes: a table whose
values are sums of 1, 2, 4, 8 ... is read with one ``bit_count`` per plane instead of a loop
over the pieces.

What it knows, in both variants:

- material, with kings worth more than men, far more in Russian where they fly;
- men: back-rank guard (the bridge squares that keep the opponent from crowning), centre,
  and advancement, read from each square's worth; a term for advancement as the board
  empties, which the fit made a slight brake in both variants;
- runaway men: a man that no opponent piece can stop from crowning is nearly a king;
- mobility: the number of quiet moves each side has (Russian only: the English fit gave it
  no weight);
- tempo: a few hundredths for being the side to move (English);
- the endgame: the side ahead trades down; with kings only, the stronger side closes in on
  the weaker one and takes its mobility away while a lone king runs for a double corner
  (English) or holds the main diagonal (Russian), where one king draws against up to three;
- the end itself: a side to move that has no move at all has lost, and scores ``-WIN``.
  The search evaluates only positions with no capture to make, so the quiet moves counted
  for mobility tell whether the side to move can move at all; the search turns ``-WIN``
  into a loss at the ply where the position stands.

The weights are fitted by Texel's method (``bench/tune_evaluation.py``) to Goti's own games at
match time controls: Hard and Master against each other and against the frozen baseline.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Final

from goti.rules.movegen import count_quiet_moves
from goti.rules.squares import BIT_OF_SQUARE, BOARD, DIRECTIONS, SQUARE_OF_BIT
from goti.rules.variants import Variant

Evaluator = Callable[[int, int, int, bool], int]
"""``evaluate(mine, theirs, kings, white)``: the score for the side to move."""

WIN: Final = 30_000
"""The score of a won position at the root; a win found ``n`` plies away scores ``WIN - n``.
:func:`evaluate` gives ``-WIN`` to a side to move that has no move: it has lost there."""
DRAW: Final = 0


def _row_col(square: int) -> tuple[int, int]:
    row, index = divmod(square - 1, 4)
    return row, 2 * index + (1 if row % 2 == 0 else 0)


def _bits(squares: Sequence[int]) -> int:
    board = 0
    for square in squares:
        board |= BIT_OF_SQUARE[square]
    return board


def _planes(values: Sequence[int], count: int) -> tuple[int, ...]:
    """``count`` bit planes of a square table (``values[s - 1]`` for square ``s``)."""
    if min(values) < 0 or max(values) >= 1 << count:
        raise ValueError(f"a table read with {count} planes holds 0 to {(1 << count) - 1}")
    return tuple(
        _bits([s for s in range(1, 33) if values[s - 1] >> plane & 1]) for plane in range(count)
    )


def _rotated(values: Sequence[int]) -> list[int]:
    """The table seen from the other side: square ``s`` takes the value of ``33 - s``."""
    return [values[32 - s] for s in range(1, 33)]


def _cone(square: int, white: bool) -> int:
    """The squares a man on ``square`` could reach on its way to the crowning row."""
    row, col = _row_col(square)
    found = []
    for other in range(1, 33):
        other_row, other_col = _row_col(other)
        ahead = row - other_row if white else other_row - row
        if ahead > 0 and abs(other_col - col) <= ahead:
            found.append(other)
    return _bits(found)


# Square tables for a White man, rank 8 at the top (a White man is never on row 0).  Black's
# tables are the same rotated half a turn.  Values in hundredths of a man, fitted to Goti's
# games by ``bench/tune_evaluation.py`` (the man's value is what they add to: the fit's table
# is shifted up until no square is below 0, and the man's value down as much).
_ENGLISH_WHITE_MAN: Final = [
    0, 0, 0, 0,
    9, 30, 25, 29,
    17, 16, 25, 23,
    3, 13, 14, 13,
    5, 12, 7, 25,
    31, 0, 26, 11,
    18, 24, 20, 15,
    7, 26, 35, 37,
]  # fmt: skip
_RUSSIAN_WHITE_MAN: Final = [
    0, 0, 0, 0,
    15, 17, 17, 15,
    13, 15, 15, 6,
    7, 15, 14, 8,
    3, 15, 14, 10,
    3, 7, 13, 3,
    3, 11, 8, 3,
    0, 14, 17, 13,
]  # fmt: skip
# Rows advanced from the own back row, for the endgame push.
_WHITE_ADVANCE: Final = [7 - (s - 1) // 4 if s > 4 else 0 for s in range(1, 33)]


def king_table(variant_flying: bool) -> list[int]:
    """The worth of a king's square, before :attr:`Weights.king_square` scales it."""
    values = []
    for square in range(1, 33):
        row, col = _row_col(square)
        centrality = min(row, 7 - row) + min(col, 7 - col)
        if variant_flying:
            # A flying king rules the long diagonals: the main road a1-h8 above all, then the
            # two double roads a7-g1 and b8-h2.
            value = centrality // 2
            if row + col == 7:
                value += 12
            elif abs(row - col) == 1:
                value += 6
        else:
            value = 2 * centrality
        values.append(value)
    return values


MAIN_DIAGONAL: Final = _bits([s for s in range(1, 33) if sum(_row_col(s)) == 7])
"""a1-h8: the long road a lone flying king holds to draw against up to three kings."""
DOUBLE_CORNERS: Final = _bits([1, 5, 28, 32])
"""b8, a7, h2, g1: the corners a lone English king runs for."""
_DOUBLE_CORNER_NEAR: Final = _bits([1, 5, 28, 32, 6, 9, 24, 27])
DOUBLE_ROADS: Final = _bits([s for s in range(1, 33) if abs(_row_col(s)[0] - _row_col(s)[1]) == 1])
"""a7-g1 and b8-h2: the two diagonals that run between the double corners."""
_HUNT_BONUS: Final = 100
"""What being the only side able to win is worth once no man is left."""
_WEAK_MOBILITY: Final = 6
_UNSAFE_FLIGHT: Final = 30


def _step(bits: int, step: int) -> int:
    return bits << step if step > 0 else bits >> -step


def safe_flights(king: int, hunters: int) -> int:
    """How many squares a lone flying king can move to without being taken next move.

    ``king`` is the lone king's bit, ``hunters`` the other side's flying kings.  A square is
    unsafe when a hunter looks at it down a diagonal with the square beyond it free.
    """
    empty = BOARD & ~hunters
    safe = 0
    for step in DIRECTIONS:
        square = _step(king, step)
        while square & empty:
            for way in DIRECTIONS:
                if not _step(square, -way) & empty:
                    continue
                seen = _step(square, way)
                while seen & empty:
                    seen = _step(seen, way)
                if seen & hunters:
                    break
            else:
                safe += 1
            square = _step(square, step)
    return safe


_DISTANCE: Final[dict[tuple[int, int], int]] = {}
for _a in range(1, 33):
    for _b in range(1, 33):
        (_ra, _ca), (_rb, _cb) = _row_col(_a), _row_col(_b)
        _DISTANCE[BIT_OF_SQUARE[_a], BIT_OF_SQUARE[_b]] = max(abs(_ra - _rb), abs(_ca - _cb))

WHITE_CONES: Final = {BIT_OF_SQUARE[s]: _cone(s, True) for s in range(1, 33)}
BLACK_CONES: Final = {BIT_OF_SQUARE[s]: _cone(s, False) for s in range(1, 33)}
WHITE_RUN_ROWS: Final = _bits(range(5, 17))
"""Men within three rows of crowning: only they are checked for a free run."""
BLACK_RUN_ROWS: Final = _bits(range(17, 29))


@dataclass(frozen=True, slots=True)
class Weights:
    """The evaluation's numbers for one variant, in hundredths of a man."""

    man: int
    king: int
    man_trade: int
    """What a man ahead gains as the board empties: this much more with 0 pieces left, in
    proportion to the 24 a board starts with (how the side ahead is drawn to exchanges)."""
    king_trade: int
    """The same for a king ahead."""
    man_table: tuple[int, ...]
    """A White man's worth on each square (``man_table[s - 1]``), rank 8 at the top; a Black
    man's is the same rotated half a turn."""
    advance: int
    """Sixteenths of a hundredth, per row advanced and per piece gone below 24, once fewer
    than 20 pieces are left: the endgame push."""
    mobility: int
    """Quarters, per quiet move more than the other side has."""
    runaway: int
    """A man with a free run is worth this much more, less a tenth of it per row to go."""
    king_square: int
    """Quarters: how much of :func:`king_table` a king's square is worth."""
    tempo: int
    """What being the side to move is worth."""


# Both fitted by Texel's method to the games of Goti's matches (``bench/tune_evaluation.py
# matches``, then ``fit``; the README's computer player section gives the figures).
ENGLISH_WEIGHTS: Final = Weights(
    man=105,
    king=132,
    man_trade=116,
    king_trade=130,
    man_table=tuple(_ENGLISH_WHITE_MAN),
    advance=-3,
    mobility=0,
    runaway=34,
    king_square=4,
    tempo=2,
)
RUSSIAN_WEIGHTS: Final = Weights(
    man=109,
    king=277,
    man_trade=106,
    king_trade=277,
    man_table=tuple(_RUSSIAN_WHITE_MAN),
    advance=-9,
    mobility=14,
    runaway=121,
    king_square=49,
    tempo=0,
)


def weights_for(variant: Variant) -> Weights:
    """The weights the variant's evaluation uses."""
    return RUSSIAN_WEIGHTS if variant.flying_kings else ENGLISH_WEIGHTS


@cache
def make_evaluator(variant: Variant) -> Evaluator:
    """The evaluation function for a variant, its tables bound as locals for speed.

    Built once per variant: the function keeps no state, so every search shares it.
    """
    flying = variant.flying_kings
    weights = weights_for(variant)
    man_value, king_value = weights.man, weights.king
    man_trade, king_trade = weights.man_trade, weights.king_trade
    advance_weight = weights.advance
    king_square_weight = weights.king_square
    tempo = weights.tempo
    mobility_weight = weights.mobility
    runaway_value = weights.runaway
    white_man_table = weights.man_table
    # Six planes for a man's square, three for its advance, four for a king's square.
    men_planes = (_planes(_rotated(white_man_table), 6), _planes(white_man_table, 6))
    advance_planes = (_planes(_rotated(_WHITE_ADVANCE), 3), _planes(_WHITE_ADVANCE, 3))
    king0, king1, king2, king3 = _planes(king_table(flying), 4)
    cones = (BLACK_CONES, WHITE_CONES)
    run_rows = (BLACK_RUN_ROWS, WHITE_RUN_ROWS)
    count_moves = count_quiet_moves
    board = BOARD

    def runaways(men: int, their_pieces: int, their_kings: int, white: bool) -> int:
        """The bonus for men no opponent piece can stop (each side's own tempo ignored)."""
        candidates = men & run_rows[white]
        side_cones = cones[white]
        bonus = 0
        while candidates:
            bit = candidates & -candidates
            candidates ^= bit
            if not side_cones[bit] & their_pieces:
                square = SQUARE_OF_BIT[bit]
                rows_to_go = (square - 1) // 4 if white else 7 - (square - 1) // 4
                value = runaway_value - runaway_value * rows_to_go // 10
                bonus += value // 2 if their_kings else value
        return bonus

    def king_squares(pieces: int) -> int:
        return (
            (pieces & king0).bit_count()
            + ((pieces & king1).bit_count() << 1)
            + ((pieces & king2).bit_count() << 2)
            + ((pieces & king3).bit_count() << 3)
        )

    def hunt(strong: int, weak: int, strong_white: bool) -> int:
        """The score of the side with more kings, when no man is left on the board."""
        strong_count = strong.bit_count()
        weak_count = weak.bit_count()
        if (
            flying
            and weak_count == 1
            and (strong_count <= 2 or (strong_count == 3 and weak & MAIN_DIAGONAL))
        ):
            # One flying king draws against two, or against three from the main road: keep
            # the extra material all the same, but expect nothing from it.
            return 10 * (strong_count - weak_count) + king_squares(strong) // 4
        material = king_value * (strong_count - weak_count)
        pieces = strong_count + weak_count
        score = material + king_trade * (strong_count - weak_count) * (24 - pieces) // 24
        score += _HUNT_BONUS
        # Close in on the weaker kings and take their moves away.
        target = weak
        while target:
            prey = target & -target
            target ^= prey
            hunters = strong
            while hunters:
                hunter = hunters & -hunters
                hunters ^= hunter
                score -= 3 * _DISTANCE[hunter, prey]
        all_kings = strong | weak
        score -= _WEAK_MOBILITY * count_moves(weak, strong, all_kings, not strong_white, flying)
        if flying and weak_count == 1:
            score -= _UNSAFE_FLIGHT * safe_flights(weak, strong)
        if flying:
            if strong & MAIN_DIAGONAL:
                score += 40
            score += 8 * (strong & DOUBLE_ROADS).bit_count()
        elif weak & DOUBLE_CORNERS:
            score -= 20
        elif weak & _DOUBLE_CORNER_NEAR:
            score -= 8
        return score

    def kings_only(mine: int, theirs: int, white: bool) -> int:
        empty = board & ~(mine | theirs)
        if not ((mine << 4 | mine << 5 | mine >> 4 | mine >> 5) & empty):
            return -WIN  # no king of mine has an empty square beside it: no move at all
        my_count = mine.bit_count()
        their_count = theirs.bit_count()
        if my_count > their_count:
            return hunt(mine, theirs, white)
        if their_count > my_count:
            return -hunt(theirs, mine, not white)
        return (king_squares(mine) - king_squares(theirs)) // 4

    def evaluate(mine: int, theirs: int, kings: int, white: bool) -> int:
        my_kings = mine & kings
        their_kings = theirs & kings
        my_men = mine ^ my_kings
        their_men = theirs ^ their_kings
        if not my_men and not their_men:
            return kings_only(mine, theirs, white)
        my_king_count = my_kings.bit_count()
        their_king_count = their_kings.bit_count()
        my_count = mine.bit_count()
        their_count = theirs.bit_count()
        men_ahead = my_count - my_king_count - their_count + their_king_count
        kings_ahead = my_king_count - their_king_count
        pieces = my_count + their_count
        score = man_value * men_ahead + king_value * kings_ahead + tempo
        score += (man_trade * men_ahead + king_trade * kings_ahead) * (24 - pieces) // 24
        black = not white
        plane0, plane1, plane2, plane3, plane4, plane5 = men_planes[white]
        score += (
            (my_men & plane0).bit_count()
            + ((my_men & plane1).bit_count() << 1)
            + ((my_men & plane2).bit_count() << 2)
            + ((my_men & plane3).bit_count() << 3)
            + ((my_men & plane4).bit_count() << 4)
            + ((my_men & plane5).bit_count() << 5)
        )
        plane0, plane1, plane2, plane3, plane4, plane5 = men_planes[black]
        score -= (
            (their_men & plane0).bit_count()
            + ((their_men & plane1).bit_count() << 1)
            + ((their_men & plane2).bit_count() << 2)
            + ((their_men & plane3).bit_count() << 3)
            + ((their_men & plane4).bit_count() << 4)
            + ((their_men & plane5).bit_count() << 5)
        )
        if pieces < 20:
            plane0, plane1, plane2 = advance_planes[white]
            advance = (
                (my_men & plane0).bit_count()
                + ((my_men & plane1).bit_count() << 1)
                + ((my_men & plane2).bit_count() << 2)
            )
            plane0, plane1, plane2 = advance_planes[black]
            advance -= (
                (their_men & plane0).bit_count()
                + ((their_men & plane1).bit_count() << 1)
                + ((their_men & plane2).bit_count() << 2)
            )
            score += advance * (24 - pieces) * advance_weight // 16
        if my_men & run_rows[white]:
            score += runaways(my_men, theirs, their_kings, white)
        if their_men & run_rows[black]:
            score -= runaways(their_men, mine, my_kings, black)
        if kings:
            my_moves = count_moves(mine, theirs, kings, white, flying)
            their_moves = count_moves(theirs, mine, kings, black, flying)
        else:
            # Men only: count the steps in bulk, as count_quiet_moves does.
            empty = board & ~(mine | theirs)
            if white:
                my_moves = ((my_men >> 4) & empty).bit_count() + ((my_men >> 5) & empty).bit_count()
                their_moves = ((their_men << 4) & empty).bit_count() + (
                    (their_men << 5) & empty
                ).bit_count()
            else:
                my_moves = ((my_men << 4) & empty).bit_count() + ((my_men << 5) & empty).bit_count()
                their_moves = ((their_men >> 4) & empty).bit_count() + (
                    (their_men >> 5) & empty
                ).bit_count()
        if not my_moves:
            return -WIN
        score += mobility_weight * (my_moves - their_moves) // 4
        if kings:
            score += (king_squares(my_kings) - king_squares(their_kings)) * king_square_weight // 4
        return score

    return evaluate
