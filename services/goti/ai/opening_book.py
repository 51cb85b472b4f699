"""The opening book: the first moves out of the standard openings, chosen by Goti's own deep
searches (``goti book build``, :mod:`goti.ai.book_building`), shipped as data.

Each variant's book is one text file, ``book/<variant>.book``: a line per position, its PDN
FEN (side to move included), then one or two moves, each written ``notation score depth``
(the score for the side to move in hundredths of a man, at that nominal depth).  When a line
has two moves, the second scored within :data:`VARIETY_MARGIN` of the first at the same
depth, and the computer picks either at random, so that games from one opening differ.
Lines starting with ``#`` say how the book was built.

The timed levels (Hard, Master, Quick) play from it; Easy and Normal keep their own
mistakes.  A position is looked up by its FEN, which holds everything a book move depends on
this early (no repetition is possible in the first moves of a game).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from goti.rules.position import Position
from goti.rules.variants import Variant, find_variant

SHIPPED: Final = Path(__file__).parent / "book"
"""Where the books shipped with Goti lie."""
VARIETY_MARGIN: Final = 6
"""A second move enters the book when it scores this close to the best (hundredths)."""


@dataclass(frozen=True, slots=True)
class BookMove:
    """A move of the book, as its search saw it."""

    notation: str
    score: int
    """For the side to move, in hundredths of a man."""
    depth: int
    """The nominal depth of the search that scored it."""


class OpeningBook:
    """One variant's book: FEN to the moves it allows."""

    def __init__(self, variant: Variant, entries: dict[str, tuple[BookMove, ...]]) -> None:
        self.variant = variant
        self._entries = entries

    def __len__(self) -> int:
        return len(self._entries)

    def items(self) -> list[tuple[str, tuple[BookMove, ...]]]:
        """Every position's FEN and its moves, in the file's order."""
        return list(self._entries.items())

    def moves(self, position: Position) -> tuple[BookMove, ...]:
        """The book's moves for ``position`` (none when it is not in the book)."""
        if position.variant != self.variant:
            return ()
        return self._entries.get(position.fen(), ())

    def choose(self, position: Position, chance: random.Random) -> BookMove | None:
        """One of the book's moves for ``position`` at random, None when it has none."""
        found = self.moves(position)
        return chance.choice(found) if found else None

    @classmethod
    def read(cls, path: Path, variant: Variant) -> OpeningBook:
        """A book from its file (raises ``ValueError`` naming the line that is not one)."""
        entries: dict[str, tuple[BookMove, ...]] = {}
        for number, line in enumerate(path.read_text(encoding="ascii").splitlines(), start=1):
            if not line or line.startswith("#"):
                continue
            fen, *moves = line.split("\t")
            try:
                entries[fen] = tuple(_book_move(text) for text in moves)
            except ValueError as error:
                raise ValueError(f"{path}:{number}: {error}") from None
            if not moves:
                raise ValueError(f"{path}:{number}: a position with no move")
        return cls(variant, entries)

    def write(self, path: Path, header: list[str]) -> None:
        """The book to ``path``, its positions sorted, under ``header``'s comment lines."""
        lines = [f"# {text}" for text in header]
        for fen, moves in sorted(self._entries.items()):
            written = "\t".join(f"{m.notation} {m.score} {m.depth}" for m in moves)
            lines.append(f"{fen}\t{written}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="ascii")


def _book_move(text: str) -> BookMove:
    parts = text.split(" ")
    if len(parts) != 3:
        raise ValueError(f"{text!r} is not 'notation score depth'")
    notation, score, depth = parts
    return BookMove(notation, int(score), int(depth))


def book_path(directory: Path, variant: Variant) -> Path:
    """The file of ``variant``'s book in ``directory``."""
    return directory / f"{variant.name}.book"


_shipped: dict[str, OpeningBook] = {}


def shipped_book(variant: Variant | str) -> OpeningBook:
    """The book shipped with Goti for a variant (empty if none is), read once per process."""
    rules = find_variant(variant) if isinstance(variant, str) else variant
    if rules.name not in _shipped:
        path = book_path(SHIPPED, rules)
        _shipped[rules.name] = (
            OpeningBook.read(path, rules) if path.exists() else OpeningBook(rules, {})
        )
    return _shipped[rules.name]
