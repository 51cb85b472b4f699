"""Building the opening book (``goti book build``): deep searches over the standard openings.

For every opening of an openings file (``bench/openings.json``: the English 3-move ballots
and the Russian opening table, with their sources), the book holds the position the opening
leaves, every position one move after it (the computer may be the second to move out of
it), and the positions on the way to it from the start.  Each is searched for ``seconds`` of
CPU; the best move enters the book, and the second best too when a search of the other moves
to the same depth scores it within :data:`~goti.ai.opening_book.VARIETY_MARGIN`.  Positions
with a single legal move are left out: they need no book.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from goti.ai.opening_book import VARIETY_MARGIN, BookMove, OpeningBook
from goti.ai.search import Searcher, SearchLimits, SearchMemory
from goti.rules.position import Position
from goti.rules.variants import Variant


def book_positions(variant: Variant, openings: Iterable[list[str]]) -> list[Position]:
    """The positions a book over ``openings`` (each a list of moves from the start) holds,
    once each, in a stable order; those with fewer than two legal moves left out."""
    found: dict[str, Position] = {}

    def add(position: Position) -> None:
        if len(position.legal_moves) > 1:
            found.setdefault(position.fen(), position)

    for moves in openings:
        position = Position.initial(variant)
        for text in moves:
            add(position)
            position = position.push(position.parse_move(text))
        add(position)
        for move in position.legal_moves:
            add(position.push(move))
    return list(found.values())


def openings_of(path: Path, variant: Variant) -> list[list[str]]:
    """The openings' moves of ``variant`` in an openings file."""
    table = json.loads(path.read_text(encoding="utf-8"))[variant.name]["openings"]
    return [list(opening["moves"]) for opening in table]


def book_moves(position: Position, seconds: float) -> tuple[BookMove, ...]:
    """The move a search of ``seconds`` finds, and a second one that scores nearly as well
    at the same depth."""
    memory = SearchMemory()
    searcher = Searcher(position, memory=memory)
    best = searcher.iterate(SearchLimits(cpu_seconds=seconds))
    notation = position.notation(list(position.legal_moves)[best.move_index])
    chosen = [BookMove(notation, best.score, best.depth)]
    others = [i for i in range(len(searcher.root_moves)) if i != best.move_index]
    rival = Searcher(position, memory=memory)
    rival.root_moves = [rival.root_moves[i] for i in others]
    second = rival.iterate(SearchLimits(max_depth=best.depth, cpu_seconds=seconds))
    if second.depth == best.depth and second.score >= best.score - VARIETY_MARGIN:
        move = list(position.legal_moves)[others[second.move_index]]
        chosen.append(BookMove(position.notation(move), second.score, second.depth))
    return tuple(chosen)


def _entry(task: tuple[Position, float]) -> tuple[str, tuple[BookMove, ...]]:
    position, seconds = task
    return position.fen(), book_moves(position, seconds)


def build_book(
    variant: Variant,
    positions: list[Position],
    seconds: float,
    *,
    jobs: int = 1,
    on_progress: Callable[[int, int], None] | None = None,
) -> OpeningBook:
    """The book of ``positions``, each searched for ``seconds``, over ``jobs`` processes."""
    entries: dict[str, tuple[BookMove, ...]] = {}
    tasks = [(position, seconds) for position in positions]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for done, (fen, moves) in enumerate(pool.map(_entry, tasks, chunksize=4), start=1):
            entries[fen] = moves
            if on_progress is not None:
                on_progress(done, len(tasks))
    return OpeningBook(variant, entries)


def build_header(variant: Variant, positions: int, seconds: float, source: Path) -> list[str]:
    """The comment lines that say how a book was built."""
    return [
        f"Goti's opening book for {variant.title}: {positions} positions, each searched for "
        f"{seconds:g} s of CPU (goti book build).",
        f"Openings from {source.name}; built {time.strftime('%Y-%m-%d', time.gmtime())}.",
        "FEN<TAB>move score depth[<TAB>move score depth]: the score for the side to move in "
        "hundredths of a man.",
    ]
