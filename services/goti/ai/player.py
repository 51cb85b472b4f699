"""The computer player: choose a move for a level, and answer a draw offer.

These two functions are what the AI service runs in its worker processes: the inputs and
outputs are plain picklable values, and the search is single-threaded and does no I/O.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from goti.ai.endgame_moves import TableVerdict, table_choice
from goti.ai.endgames import EndgameTables, shipped_tables
from goti.ai.endgames.probing import complete_tables
from goti.ai.evaluation import WIN, make_evaluator
from goti.ai.levels import SETTINGS, Level, LevelSettings
from goti.ai.opening_book import BookMove, shipped_book
from goti.ai.search import (
    WIN_BOUND,
    Searcher,
    SearchLimits,
    SearchMemory,
    new_table,
    slots_within,
)
from goti.rules.game import GameState
from goti.rules.movegen import RawMove, capturers
from goti.rules.moves import Move
from goti.rules.position import Position
from goti.rules.variants import ENGLISH, RUSSIAN, Variant

LOSING: Final = 70
"""At this many hundredths of a man behind, the computer judges itself losing."""
LEVEL_MARGIN: Final = 15
"""Within this of equality a position is level."""
LEVEL_DRAW_PLY: Final = 40
"""A level draw is taken only from this ply on (twenty moves each)."""
_FALLBACK_SECONDS: Final = 0.01


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The move the computer chose and what the search behind it saw."""

    move: Move
    notation: str
    """The move in the variant's standard notation, every landing square written."""
    score: int
    """For the side that moved, in hundredths of a man (a man is 100)."""
    depth: int
    """The plies searched (captures after that are always followed)."""
    nodes: int
    seconds: float
    """CPU seconds spent."""
    principal_variation: tuple[str, ...] = ()
    """The line the search expects, starting with the move, in notation."""
    proven_loss: bool = False
    """The search proved that every legal move loses by force: the side to move has lost
    against best play, and ``move`` is the one that holds out longest.  The computer resigns
    on such a result; a move played for a person is played all the same."""

    @property
    def forced_in_plies(self) -> int:
        """When the score is a forced win or loss, the plies until the game ends; else 0."""
        return WIN - abs(self.score) if abs(self.score) > WIN_BOUND else 0


@dataclass(frozen=True, slots=True)
class DrawDecision:
    """The answer to a draw offer: accept or not, and the score it was judged on."""

    accept: bool
    score: int
    """For the side answering, in hundredths of a man."""


def _level(level: Level | str) -> Level:
    return level if isinstance(level, Level) else Level.parse(level)


def _playable(state: GameState) -> Position:
    if state.outcome is not None:
        raise ValueError("the game is over: there is no move to choose")
    position = state.position
    if not position.raw_moves():
        raise ValueError("the side to move has no legal move")
    return position


DEFAULT_SEARCH_MEMORY_MB: Final = 128
"""What this process's search memories may take, both variants together, unless
:func:`limit_search_memory` says otherwise (the AI service's ``GOTI_AI_SEARCH_MEMORY_MB``)."""


class _Memories:
    """The timed levels' search memory, one per variant, kept by this process from move to
    move: most of a move's tree is still there when the same game comes back two plies on."""

    def __init__(self, megabytes: float) -> None:
        self.slots = self.resize(megabytes)
        self._by_variant: dict[str, SearchMemory] = {}

    def resize(self, megabytes: float) -> int:
        """Tables of at most ``megabytes`` for both variants together from now on; the
        memories made before are dropped (a table of another size would lose them anyway)."""
        self.slots = slots_within(megabytes / 2)
        self._by_variant = {}
        return self.slots

    def of(self, variant: str) -> SearchMemory:
        memory = self._by_variant.get(variant)
        if memory is None:
            memory = self._by_variant[variant] = SearchMemory(new_table(self.slots))
        return memory


_MEMORIES: Final = _Memories(DEFAULT_SEARCH_MEMORY_MB)


def search_memory_slots() -> int:
    """The slots of each search memory this process keeps (one a variant)."""
    return _MEMORIES.slots


def limit_search_memory(megabytes: float) -> int:
    """Size the search memories this process keeps so that, full, they take at most
    ``megabytes`` for both variants together; returns the slots of each."""
    return _MEMORIES.resize(megabytes)


class _MasterTables:
    """The endgame tables Master reads, a set a variant: a folder's larger set where one was
    given (:func:`use_master_tables`), else the shipped ones that the other levels read."""

    def __init__(self) -> None:
        self._by_variant: dict[str, EndgameTables] = {}

    def use(self, folder: Path | None) -> dict[str, int]:
        found: dict[str, EndgameTables] = {}
        if folder is not None:
            for variant in (ENGLISH, RUSSIAN):
                tables = complete_tables(variant, folder)  # raises before anything changes
                if tables is not None:
                    found[variant.name] = tables
        self._by_variant = found
        return {variant.name: self.of(variant).max_pieces for variant in (ENGLISH, RUSSIAN)}

    def of(self, variant: Variant) -> EndgameTables:
        return self._by_variant.get(variant.name) or shipped_tables(variant)


_MASTER_TABLES: Final = _MasterTables()


def prepare_levels() -> None:
    """Read now what the first move of a process would otherwise read on its clock: both
    variants' opening books (a thousand lines apiece parsed into objects, enough to set off a
    full garbage collection of a large heap) and their evaluations.
    A fresh AI worker calls it before its first request, so that Quick's first move keeps to
    its 12 ms like every other."""
    for variant in (ENGLISH, RUSSIAN):
        shipped_book(variant)
        make_evaluator(variant)


def use_master_tables(folder: Path | None) -> dict[str, int]:
    """From now on Master reads the tables in ``folder`` for each variant it holds a whole
    set of (``goti endgames build --pieces 5 --out FOLDER``), the shipped ones otherwise;
    None: the shipped ones for both.  Returns the most pieces Master's tables hold, by
    variant.  Raises :class:`~goti.ai.endgames.probing.IncompleteTablesError`, changing
    nothing, when the folder holds only part of a variant's set.

    The other levels keep the shipped tables: a level's strength is part of what it
    promises, and Master's larger tables take memory in every process that plays it (139 MB
    a variant for the five-piece tables, loaded a material at a time as probes reach them).
    """
    return _MASTER_TABLES.use(folder)


def level_tables(level: Level, variant: Variant) -> EndgameTables:
    """The endgame tables a level reads in this process, for a variant."""
    return _MASTER_TABLES.of(variant) if level is Level.MASTER else shipped_tables(variant)


def _searcher(
    state: GameState, *, timed: bool, contempt: int = 0, tables: EndgameTables | None = None
) -> Searcher:
    """A search from ``state``: for the timed levels with the memory this process kept and the
    endgame tables at the leaves (``tables``, the shipped ones by default); for Easy and
    Normal, which score every move at their own depth, with neither, since deeper knowledge
    would change what they promise."""
    if not timed:
        return Searcher(state.position, history=state.repetition, quiet_plies=state.quiet_plies)
    variant = state.position.variant
    if tables is None:
        tables = shipped_tables(variant)
    return Searcher(
        state.position,
        history=state.repetition,
        quiet_plies=state.quiet_plies,
        memory=_MEMORIES.of(variant.name),
        table_value=tables.value_sides,
        table_pieces=tables.max_pieces,
        contempt=contempt,
    )


def level_searcher(state: GameState, level: Level | str) -> Searcher:
    """The search ``level`` runs from ``state`` when it chooses a move there, before it is
    given limits: this process's memory, the level's endgame tables and contempt for the
    timed levels, neither for Easy and Normal (for tools that search as a level does)."""
    chosen_level = _level(level)
    settings = SETTINGS[chosen_level]
    return _searcher(
        state,
        timed=settings.depth is None,
        contempt=settings.contempt,
        tables=level_tables(chosen_level, state.position.variant),
    )


def choose_move(
    state: GameState,
    level: Level | str,
    *,
    time_budget: float | None = None,
    seed: int | None = None,
    wall_deadline: float | None = None,
) -> SearchResult:
    """The move the computer plays at ``level`` for the side to move in ``state``.

    ``time_budget`` (CPU seconds) replaces the level's own budget: spent as given by Hard,
    Master and Quick (Hard's and Master's own are planned move by move), a safety cap for
    Easy and Normal.  ``wall_deadline`` (a ``time.monotonic()`` instant) stops the search
    however little CPU it had, for a caller that must answer by then.  The move is always
    legal and always comes back: a search that runs out of time plays the best move found so
    far.  ``seed`` makes the random choices of Easy and Normal repeatable.  Raises
    ``ValueError`` when the game is over or the side to move has no move.
    """
    chosen_level = _level(level)
    settings = SETTINGS[chosen_level]
    position = _playable(state)
    limits = _limits(settings, time_budget, wall_deadline)
    started = time.thread_time()
    if settings.depth is None:
        booked = shipped_book(position.variant).choose(position, random.Random(seed))
        if booked is not None:
            return _book_result(position, booked, started)
    tables = level_tables(chosen_level, position.variant)
    searcher = level_searcher(state, chosen_level)
    moves = list(position.legal_moves)
    if settings.depth is None:
        from_tables = table_choice(position, tables)
        drawing = (
            from_tables.moves
            if from_tables is not None and from_tables.verdict is TableVerdict.DRAW
            else None
        )
        if drawing is not None:
            # A draw with best play: the search picks among the moves that keep it.
            searcher.root_moves = [searcher.root_moves[i] for i in drawing]
        report = searcher.iterate(limits)
        index, score, depth = report.move_index, report.score, report.depth
        proven_loss = report.proven_loss
        if drawing is not None:
            index = drawing[index]
        elif (
            from_tables is not None
            and from_tables.verdict is TableVerdict.WIN
            and score <= WIN_BOUND
        ):
            # The search sees no win to the end: the tables' soonest conversion, which they
            # count in plies to the conversion, not to the end.
            index, score, depth = from_tables.moves[0], WIN_BOUND, from_tables.plies
    else:
        picked = _pick_with_noise(searcher, settings, limits, random.Random(seed))
        if picked is None:
            # Out of budget before every move was scored: fall back on the quick search.
            report = searcher.iterate(
                SearchLimits(cpu_seconds=_FALLBACK_SECONDS, wall_deadline=wall_deadline)
            )
            index, score, depth = report.move_index, report.score, report.depth
            proven_loss = report.proven_loss
        else:
            index, score, proven_loss = picked
            depth = settings.depth
    move = moves[index]
    line = searcher.principal_variation(position.raw_moves()[index], max(depth, 1))
    return SearchResult(
        move=move,
        notation=position.notation(move),
        score=score,
        depth=depth,
        nodes=searcher.nodes,
        seconds=time.thread_time() - started,
        principal_variation=_notation_of_line(position, line),
        proven_loss=proven_loss,
    )


def _limits(
    settings: LevelSettings, time_budget: float | None, wall_deadline: float | None
) -> SearchLimits:
    """A level's limits: its own time planned around its typical move's where it plans it,
    else a fixed budget, the level's own or the caller's."""
    if time_budget is None and settings.most_cpu_seconds is not None:
        return SearchLimits(
            cpu_seconds=settings.most_cpu_seconds,
            target_cpu_seconds=settings.cpu_seconds,
            wall_deadline=wall_deadline,
        )
    budget = settings.cpu_seconds if time_budget is None else max(time_budget, 0.001)
    return SearchLimits(cpu_seconds=budget, wall_deadline=wall_deadline)


def _book_result(position: Position, booked: BookMove, started: float) -> SearchResult:
    return SearchResult(
        move=position.parse_move(booked.notation),
        notation=booked.notation,
        score=booked.score,
        depth=booked.depth,
        nodes=0,
        seconds=time.thread_time() - started,
        principal_variation=(booked.notation,),
    )


def _notation_of_line(position: Position, line: list[RawMove]) -> tuple[str, ...]:
    written = []
    for raw in line:
        index = position.raw_moves().index(raw)
        move = list(position.legal_moves)[index]
        written.append(position.notation(move))
        position = position.push(move)
    return tuple(written)


def _pick_with_noise(
    searcher: Searcher, settings: LevelSettings, limits: SearchLimits, chance: random.Random
) -> tuple[int, int, bool] | None:
    """Score every root move at the level's depth, blur the scores, take the best blurred one.

    Returns the move's index, its true score and whether every move is a proven loss, or
    None when the budget ran out.  When every move loses there is no mistake left to make:
    the move that holds out longest is played, unblurred.
    """
    assert settings.depth is not None
    scores = searcher.score_all(settings.depth, limits)
    if scores is None:
        return None
    best = max(range(len(scores)), key=scores.__getitem__)
    if scores[best] < -WIN_BOUND:
        return best, scores[best], True
    blurred = [
        score + chance.gauss(0.0, settings.noise) if settings.noise else score for score in scores
    ]
    index = max(range(len(scores)), key=blurred.__getitem__)
    return index, scores[index], False


def decide_draw(state: GameState, level: Level | str) -> DrawDecision:
    """Whether the side to move, played by the computer at ``level``, accepts a draw offer.

    Every level accepts when it judges itself losing.  Hard and Master also accept in a
    level, quiet position: no capture pending for either side, the score near equality,
    material even, and the game past its opening.  No level accepts while it judges itself
    ahead.
    """
    chosen_level = _level(level)
    settings = SETTINGS[chosen_level]
    position = _playable(state)
    searcher = _searcher(
        state,
        timed=settings.depth is None,
        tables=level_tables(chosen_level, position.variant),
    )
    if settings.depth is None:
        score = searcher.iterate(SearchLimits(cpu_seconds=settings.cpu_seconds)).score
    else:
        report = searcher.iterate(
            SearchLimits(max_depth=settings.depth, cpu_seconds=settings.cpu_seconds)
        )
        score = report.score
    if score <= -LOSING:
        return DrawDecision(accept=True, score=score)
    level_and_quiet = (
        settings.accepts_level_draws
        and abs(score) <= LEVEL_MARGIN
        and state.ply >= LEVEL_DRAW_PLY
        and _is_quiet(position)
        and _material_even(position)
    )
    if level_and_quiet:
        return DrawDecision(accept=True, score=score)
    return DrawDecision(accept=False, score=score)


def _is_quiet(position: Position) -> bool:
    """No capture pending for the side to move, nor for the other side were it to move."""
    variant = position.variant
    mine, theirs = position.sides()
    white = position.white_to_move
    for side, other, side_is_white in ((mine, theirs, white), (theirs, mine, not white)):
        if capturers(
            side,
            other,
            position.kings,
            side_is_white,
            variant.men_capture_backwards,
            variant.flying_kings,
        ):
            return False
    return True


def _material_even(position: Position) -> bool:
    mine, theirs = position.sides()
    kings = position.kings
    return (mine & ~kings).bit_count() == (theirs & ~kings).bit_count() and (
        mine & kings
    ).bit_count() == (theirs & kings).bit_count()
