"""Solving the tables by retrograde analysis, smallest first.

A material and its swap (the same pieces, the other side to move) are solved together:
their quiet moves lead into each other, and every other move (a capture, a promotion) leads
into a table solved before.  One forward pass lists each position's moves: those leaving
the pair are settled from the solved tables at once, the others are kept as edges.  Then a
breadth-first pass over the reversed edges spreads the results outwards by distance: a
position is a win as soon as one move reaches a loss, a loss once every move has reached a
win, and whatever is never reached is a draw.
"""

from __future__ import annotations

import time
from array import array
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

from goti.ai.endgames.indexing import Index, Material, materials
from goti.ai.endgames.probing import EndgameTables
from goti.ai.endgames.storage import write_table
from goti.ai.endgames.successors import after, child_value, legal_moves
from goti.ai.endgames.values import (
    DRAW_BYTE,
    LOSS_BASE,
    UNKNOWN,
    is_loss,
    loss,
    plies,
    win,
)
from goti.rules.variants import Variant


@dataclass(frozen=True, slots=True)
class TableReport:
    """One solved table: its counts, its longest conversion and its file."""

    material: Material
    positions: int
    wins: int
    losses: int
    draws: int
    longest: int
    """The most plies to conversion of any win or loss in the table."""
    path: Path | None
    bytes_on_disk: int


@dataclass(frozen=True, slots=True)
class _Forward:
    """One table after the forward pass: what is settled, and the edges within the pair."""

    values: bytearray
    remaining: bytearray
    """Moves within the pair not yet known to reach a win for the opponent."""
    draw_exit: bytearray
    """1 where a move out of the pair reaches a draw: never a loss then."""
    parents: array[int]
    children: array[int]


def units(found: list[Material]) -> list[list[Material]]:
    """The materials grouped with their swaps, in build order."""
    grouped: list[list[Material]] = []
    for material in found:
        if grouped and grouped[-1][0] == material.swapped():
            grouped[-1].append(material)
        else:
            grouped.append([material])
    return grouped


def _forward(variant: Variant, tables: EndgameTables, index: Index, partner: Index) -> _Forward:
    size = index.size
    values = bytearray([UNKNOWN]) * size
    remaining = bytearray(size)
    draw_exit = bytearray(size)
    parents: array[int] = array("i")
    children: array[int] = array("i")
    rank_child = partner.rank_sides
    for position, (mine, theirs, kings) in enumerate(index.positions()):
        moves = legal_moves(variant, mine, theirs, kings)
        if not moves:
            values[position] = loss(0)
            continue
        inside = 0
        drawn = False
        won = False
        for move in moves:
            origin, target, captured, crowns, _, _ = move
            if captured or crowns:
                child = child_value(tables, *after(mine, theirs, kings, move))
                if is_loss(child):
                    won = True
                    break
                drawn = drawn or child == DRAW_BYTE
            else:
                moved = origin | target
                child_kings = kings ^ moved if kings & origin else kings
                parents.append(position)
                children.append(rank_child(theirs, mine ^ moved, child_kings, False))
                inside += 1
        if won:
            values[position] = win(1)
        elif not inside:
            values[position] = DRAW_BYTE if drawn else loss(1)
        else:
            remaining[position] = inside
            draw_exit[position] = drawn
    return _Forward(values, remaining, draw_exit, parents, children)


def _reversed(forward: _Forward, size: int) -> tuple[array[int], array[int]]:
    """For each child position, where its parents start in the returned parent list."""
    starts: array[int] = array("i", bytes(4 * (size + 1)))
    for child in forward.children:
        starts[child + 1] += 1
    for position in range(size):
        starts[position + 1] += starts[position]
    filled = array("i", starts)
    parents: array[int] = array("i", bytes(4 * len(forward.children)))
    for parent, child in zip(forward.parents, forward.children, strict=True):
        parents[filled[child]] = parent
        filled[child] += 1
    return starts, parents


def _seeds(passes: list[_Forward]) -> deque[tuple[int, int, int]]:
    """The positions settled by the forward pass, nearest first: a breadth-first start."""
    by_plies: dict[int, list[tuple[int, int, int]]] = {0: [], 1: []}
    for table, forward in enumerate(passes):
        for position, value in enumerate(forward.values):
            if value not in (UNKNOWN, DRAW_BYTE):
                by_plies[plies(value)].append((table, position, plies(value)))
    return deque(by_plies[0] + by_plies[1])


def solve(variant: Variant, tables: EndgameTables, unit: list[Material]) -> list[bytearray]:
    """The solved tables of a material and its swap (one table when they are the same)."""
    indexes = [Index(material) for material in unit]
    partner = [unit.index(material.swapped()) for material in unit]
    passes = [_forward(variant, tables, indexes[t], indexes[partner[t]]) for t in range(len(unit))]
    # The parents of table t's positions are in table partner[t], reached by its edges.
    reverse = [_reversed(passes[partner[t]], indexes[t].size) for t in range(len(unit))]
    queue = _seeds(passes)
    while queue:
        table, position, distance = queue.popleft()
        parent_table = partner[table]
        parent_values = passes[parent_table].values
        remaining = passes[parent_table].remaining
        draw_exit = passes[parent_table].draw_exit
        starts, parents = reverse[table]
        child_lost = passes[table].values[position] >= LOSS_BASE
        for parent in parents[starts[position] : starts[position + 1]]:
            if parent_values[parent] != UNKNOWN:
                continue
            if child_lost:
                parent_values[parent] = win(distance + 1)
                queue.append((parent_table, parent, distance + 1))
            else:
                remaining[parent] -= 1
                if not remaining[parent] and not draw_exit[parent]:
                    parent_values[parent] = loss(distance + 1)
                    queue.append((parent_table, parent, distance + 1))
    for forward in passes:
        forward.values[:] = forward.values.replace(bytes([UNKNOWN]), bytes([DRAW_BYTE]))
    return [forward.values for forward in passes]


def table_report(material: Material, table: bytes, path: Path | None) -> TableReport:
    """The counts of a solved table."""
    counts = Counter(table)
    wins = sum(n for value, n in counts.items() if 0 < value < LOSS_BASE)
    draws = counts[DRAW_BYTE]
    longest = max((plies(value) for value in counts if value != DRAW_BYTE), default=0)
    size = path.stat().st_size if path is not None else 0
    return TableReport(
        material, len(table), wins, len(table) - wins - draws, draws, longest, path, size
    )


def build(
    variant: Variant,
    max_pieces: int,
    out: Path | None,
    on_table: Callable[[TableReport], None] | None = None,
    *,
    jobs: int = 1,
) -> tuple[EndgameTables, list[TableReport]]:
    """Solve every table of 2 to ``max_pieces`` pieces; write each under ``out`` if given.

    With ``jobs`` above 1 the tables of one level are solved by that many processes at once,
    each reading the levels below from ``out`` (which is then required); the files are the
    same as one process writes.
    """
    if jobs > 1:
        if out is None:
            raise ValueError("a build in several processes needs a folder to write to")
        return _build_in_processes(variant, max_pieces, out, on_table, jobs)
    tables = EndgameTables(variant, out, load=False)
    reports = []
    for unit in units(materials(max_pieces)):
        for material, solved in zip(unit, solve(variant, tables, unit), strict=True):
            table = bytes(solved)
            tables.add(material, Index(material), table)
            path = None if out is None else write_table(out, variant.name, material, table)
            reports.append(table_report(material, table, path))
            if on_table is not None:
                on_table(reports[-1])
    return tables, reports


def levels(max_pieces: int) -> list[list[list[Material]]]:
    """The build's units grouped by (pieces, men), in build order.

    A unit's moves out of its pair lead to fewer pieces (a capture) or fewer men (a
    promotion): never into another unit of its own level, so a level's units can be solved
    at once, each needing only the levels before it.
    """
    return [
        list(level)
        for _, level in groupby(
            units(materials(max_pieces)), key=lambda unit: (unit[0].pieces, unit[0].men)
        )
    ]


def _solve_and_write(variant: Variant, out: Path, unit: list[Material]) -> list[TableReport]:
    # A fresh set each time: the files of the levels below were written after the pool began.
    tables = EndgameTables(variant, out)
    reports = []
    for material, solved in zip(unit, solve(variant, tables, unit), strict=True):
        table = bytes(solved)
        reports.append(
            table_report(material, table, write_table(out, variant.name, material, table))
        )
    return reports


def _build_in_processes(
    variant: Variant,
    max_pieces: int,
    out: Path,
    on_table: Callable[[TableReport], None] | None,
    jobs: int,
) -> tuple[EndgameTables, list[TableReport]]:
    reports: list[TableReport] = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for level in levels(max_pieces):
            solving = [pool.submit(_solve_and_write, variant, out, unit) for unit in level]
            for future in solving:  # in build order, whatever order they finish in
                for report in future.result():
                    reports.append(report)
                    if on_table is not None:
                        on_table(report)
    return EndgameTables(variant, out), reports


def timed_build(
    variant: Variant, max_pieces: int, out: Path | None
) -> tuple[list[TableReport], float]:
    """Build and measure: the reports and the CPU seconds the build took."""
    started = time.process_time()
    _, reports = build(variant, max_pieces, out)
    return reports, time.process_time() - started
