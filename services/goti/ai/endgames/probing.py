"""Looking positions up in the tables: lazily loaded, cheap enough for a search's leaves."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from goti.ai.endgames import values
from goti.ai.endgames.indexing import Index, Material, materials
from goti.ai.endgames.storage import SHIPPED, read_table, stored_materials, table_path
from goti.ai.endgames.values import Outcome
from goti.rules.color import Color
from goti.rules.position import Position
from goti.rules.variants import Variant, find_variant


@dataclass(frozen=True, slots=True)
class Probe:
    """What a table says about a position, for the side to move."""

    outcome: Outcome
    plies: int
    """Plies to conversion with best play: to a winning capture or promotion, or to the
    end of the game (0 for a draw, and for a side with no legal move)."""


class EndgameTables:
    """The tables of one variant found in one folder, each loaded on its first probe.

    A position is covered when both sides have a piece and its material has a table file;
    everything else probes as None.  With ``load`` false no file is read: only the tables
    given to :meth:`add` count (a build, which must not lean on older files).  Files are
    read once and kept: a byte a position, 6.4 MB a variant for up to four pieces.
    """

    def __init__(
        self, variant: Variant | str, directory: Path | None = None, *, load: bool = True
    ) -> None:
        self.variant = find_variant(variant) if isinstance(variant, str) else variant
        self.directory = SHIPPED if directory is None else directory
        self._load = load
        self._tables: dict[tuple[int, int, int, int], tuple[Index, bytes] | None] = {}
        stored = stored_materials(self.directory, self.variant.name) if load else []
        self.max_pieces = max((m.pieces for m in stored), default=0)
        """The most pieces any table here holds: a quick test before a probe."""

    def add(self, material: Material, index: Index, table: bytes) -> None:
        """Hold a table built in memory, as though it had been read from a file."""
        self._tables[_key(material)] = (index, table)
        self.max_pieces = max(self.max_pieces, material.pieces)

    def table(self, material: Material) -> tuple[Index, bytes] | None:
        """The index and bytes of a material's table, loading its file the first time."""
        key = _key(material)
        if key not in self._tables:
            path = table_path(self.directory, self.variant.name, material)
            loaded = None
            if self._load and path.exists():
                loaded = (Index(material), read_table(path, self.variant.name, material))
            self._tables[key] = loaded
        return self._tables[key]

    def value_sides(self, mine: int, theirs: int, kings: int, white: bool) -> int | None:
        """The stored byte of side-relative bitboards, as the search holds them.

        ``mine`` are the side to move's pieces and ``white`` says whether that is White;
        :mod:`goti.ai.endgames.values` reads the byte.  None when the position is not covered.
        """
        if not mine or not theirs or (mine | theirs).bit_count() > self.max_pieces:
            return None
        mover_kings = (mine & kings).bit_count()
        other_kings = (theirs & kings).bit_count()
        key = (
            mine.bit_count() - mover_kings,
            mover_kings,
            theirs.bit_count() - other_kings,
            other_kings,
        )
        found = self._tables[key] if key in self._tables else self.table(Material(*key))
        if found is None:
            return None
        index, table = found
        return table[index.rank_sides(mine, theirs, kings, white)]

    def probe_sides(self, mine: int, theirs: int, kings: int, white: bool) -> Outcome | None:
        """The outcome for the side to move of side-relative bitboards, None if not covered."""
        value = self.value_sides(mine, theirs, kings, white)
        return None if value is None else values.outcome(value)

    def lookup(self, position: Position) -> Probe | None:
        """The outcome and the plies to conversion of a position, None if not covered."""
        if position.variant != self.variant:
            return None
        mine, theirs = position.sides()
        value = self.value_sides(mine, theirs, position.kings, position.turn is Color.WHITE)
        if value is None:
            return None
        return Probe(values.outcome(value), values.plies(value))

    def probe(self, position: Position) -> Outcome | None:
        """The outcome for the side to move of a position, None if not covered."""
        found = self.lookup(position)
        return None if found is None else found.outcome


def _key(material: Material) -> tuple[int, int, int, int]:
    return (material.mover_men, material.mover_kings, material.other_men, material.other_kings)


_shipped: dict[str, EndgameTables] = {}


def shipped_tables(variant: Variant | str) -> EndgameTables:
    """The tables shipped with Goti for a variant, one set per process."""
    rules = find_variant(variant) if isinstance(variant, str) else variant
    if rules.name not in _shipped:
        _shipped[rules.name] = EndgameTables(rules)
    return _shipped[rules.name]


class IncompleteTablesError(ValueError):
    """A folder of tables that lacks some material of up to its largest piece count."""


def complete_tables(variant: Variant | str, directory: Path) -> EndgameTables | None:
    """The tables of a variant in ``directory``, checked to be a whole set.

    A search may probe any material of up to the most pieces a set holds, and a missing one
    would read as "not covered" (or, at the root, as a move that ends the game), so a set
    must hold every material from two pieces up.  None when the folder holds no table of the
    variant; raises :class:`IncompleteTablesError` when it holds only some of a set.
    Only the file names are read here: the tables still load on first probe.
    """
    tables = EndgameTables(variant, directory)
    if not tables.max_pieces:
        return None
    name = tables.variant.name
    stored = set(stored_materials(directory, name))
    wanted = materials(tables.max_pieces)
    missing = [material for material in wanted if material not in stored]
    if missing:
        raise IncompleteTablesError(
            f"{directory / name} holds {len(wanted) - len(missing)} of the {len(wanted)} "
            f"tables of up to {tables.max_pieces} pieces ({missing[0].name} is missing): "
            f"build the whole set with `goti endgames build --variant {name} --pieces "
            f"{tables.max_pieces} --out {directory}`"
        )
    return tables


def probe(position: Position) -> Outcome | None:
    """The outcome with best play for the side to move, from the shipped tables.

    None when the position is not covered: more pieces than the tables hold, or a side
    with no piece at all (the game is over then).

    >>> probe(Position.from_fen("W:WK22:BK18", "english"))
    <Outcome.WIN: 'win'>
    """
    return shipped_tables(position.variant).probe(position)
