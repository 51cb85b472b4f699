"""Checking stored tables: every position enumerated afresh, every result re-derived.

The enumeration here does not use :meth:`Index.positions`: it walks the placements with
:func:`itertools.combinations` and checks that the index sends them one-to-one onto the
table.  Each stored byte is then recomputed from one ply of moves over the stored tables:
a win needs a move to a loss (and its distance the shortest such), a loss needs every move
to reach a win (and its distance the longest), a draw neither.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from itertools import combinations
from math import comb
from pathlib import Path
from typing import Final

from goti.ai.endgames.indexing import (
    BIT,
    MOVER_MEN_FIRST,
    OTHER_MEN_END,
    SQUARES,
    Material,
    materials,
)
from goti.ai.endgames.probing import EndgameTables
from goti.ai.endgames.storage import TableFileError, stored_materials
from goti.ai.endgames.successors import after, child_value, legal_moves
from goti.ai.endgames.values import DRAW_BYTE, is_loss, is_win, loss, plies, win
from goti.rules.variants import ENGLISH, Variant

PUBLISHED_ENGLISH_COUNTS: Final = {1: 120, 2: 6_972, 3: 261_224, 4: 7_092_774, 5: 148_688_232}
"""Positions of English checkers with exactly n pieces on the board, as counted for
Chinook's endgame databases (Schaeffer et al., "Checkers Is Solved", Science 317, 2007):
placements of men and kings of both colours, men never on their crowning row,
either side possibly with no piece, the side to move not counted."""

_MAX_PROBLEMS: Final = 20


@dataclass(slots=True)
class VerifyReport:
    """What a verification found for one variant."""

    variant: str
    tables: int = 0
    positions: int = 0
    problems: list[str] = field(default_factory=list)
    problem_count: int = 0

    def fail(self, message: str) -> None:
        """Note a problem (the first few are kept word for word)."""
        self.problem_count += 1
        if len(self.problems) < _MAX_PROBLEMS:
            self.problems.append(message)

    def add(self, other: VerifyReport) -> None:
        """Count in what another verification of the same variant found."""
        self.tables += other.tables
        self.positions += other.positions
        self.problems.extend(other.problems[: _MAX_PROBLEMS - len(self.problems)])
        self.problem_count += other.problem_count


def placements(material: Material) -> Iterator[tuple[list[int], list[int], list[int], list[int]]]:
    """Every placement of a material as ascending squares 0-31, group by group."""
    for mover_men in combinations(range(MOVER_MEN_FIRST, SQUARES), material.mover_men):
        for other_men in combinations(range(OTHER_MEN_END), material.other_men):
            if set(other_men) & set(mover_men):
                continue
            men = set(mover_men) | set(other_men)
            free = [q for q in range(SQUARES) if q not in men]
            for mover_kings in combinations(free, material.mover_kings):
                rest = [q for q in free if q not in mover_kings]
                for other_kings in combinations(rest, material.other_kings):
                    yield list(mover_men), list(other_men), list(mover_kings), list(other_kings)


def expected_value(
    variant: Variant, tables: EndgameTables, mine: int, theirs: int, kings: int
) -> int:
    """The byte a position must hold, from one ply of moves over the stored tables."""
    moves = legal_moves(variant, mine, theirs, kings)
    if not moves:
        return loss(0)
    to_losses = []
    to_wins = []
    for move in moves:
        child = child_value(tables, *after(mine, theirs, kings, move))
        converts = bool(move[2]) or move[3]
        distance = 1 if converts else plies(child) + 1
        if is_loss(child):
            to_losses.append(distance)
        elif is_win(child):
            to_wins.append(distance)
    if to_losses:
        return win(min(to_losses))
    if len(to_wins) == len(moves):
        return loss(max(to_wins))
    return DRAW_BYTE


def verify_table(
    variant: Variant, tables: EndgameTables, material: Material, report: VerifyReport
) -> None:
    """Check one table's index and every one of its bytes."""
    try:
        found = tables.table(material)
    except (TableFileError, OSError) as error:
        report.fail(str(error))
        return
    if found is None:
        report.fail(f"{material.name}: no table")
        return
    index, table = found
    seen = bytearray(len(table))
    count = 0
    for groups in placements(material):
        count += 1
        position = index.rank(*groups)
        if not 0 <= position < len(table) or seen[position]:
            report.fail(f"{material.name}: index {position} out of range or reached twice")
            continue
        seen[position] = 1
        mover_men, other_men, mover_kings, other_kings = (
            sum(BIT[q] for q in group) for group in groups
        )
        mine = mover_men | mover_kings
        theirs = other_men | other_kings
        try:
            expected = expected_value(variant, tables, mine, theirs, mover_kings | other_kings)
        except LookupError:
            report.fail(f"{material.name}: a move leads to a material with no table")
            return
        except (TableFileError, OSError) as error:
            report.fail(f"{material.name}: a move leads to a table that cannot be read: {error}")
            return
        if table[position] != expected:
            report.fail(
                f"{material.name}: position {position} holds {table[position]}, "
                f"its moves say {expected}"
            )
    if count != len(table) or count != index.size:
        report.fail(f"{material.name}: {count} placements, table of {len(table)}")
    report.tables += 1
    report.positions += count


def one_sided_placements(pieces: int) -> int:
    """Placements of ``pieces`` pieces all of one colour, either colour (none in a table)."""
    board = OTHER_MEN_END
    return 2 * sum(
        comb(board, men) * comb(SQUARES - men, pieces - men) for men in range(pieces + 1)
    )


def _verify_one(variant: Variant, directory: Path, material: Material) -> VerifyReport:
    report = VerifyReport(variant.name)
    verify_table(variant, EndgameTables(variant, directory), material, report)
    return report


def verify(
    variant: Variant,
    directory: Path | None = None,
    max_pieces: int | None = None,
    *,
    jobs: int = 1,
) -> VerifyReport:
    """Check the tables of a variant under ``directory`` (the shipped ones by default).

    Every table there, or those of up to ``max_pieces`` pieces; the smaller tables a table's
    moves lead into are read but not checked themselves then.  With ``jobs`` above 1 that
    many processes check tables at once (each table reads only stored files).
    """
    tables = EndgameTables(variant, directory)
    report = VerifyReport(variant.name)
    most = tables.max_pieces if max_pieces is None else min(max_pieces, tables.max_pieces)
    stored = [m for m in stored_materials(tables.directory, variant.name) if m.pieces <= most]
    if not stored:
        report.fail(f"no {variant.name} tables under {tables.directory}")
        return report
    for material in materials(most):
        if material not in stored:
            report.fail(f"{material.name}: missing")
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            checking = [
                pool.submit(_verify_one, variant, tables.directory, material) for material in stored
            ]
            for future in checking:
                report.add(future.result())
    else:
        for material in stored:
            verify_table(variant, tables, material, report)
    if variant == ENGLISH:
        for pieces, published in PUBLISHED_ENGLISH_COUNTS.items():
            if 2 <= pieces <= most:
                counted = sum(tables_size(tables, m) for m in stored if m.pieces == pieces)
                if counted + one_sided_placements(pieces) != published:
                    report.fail(f"{pieces} pieces: {counted} positions, published {published}")
    return report


def tables_size(tables: EndgameTables, material: Material) -> int:
    """The positions a stored table holds (0 when it cannot be read)."""
    try:
        found = tables.table(material)
    except (TableFileError, OSError):
        return 0
    return 0 if found is None else len(found[1])
