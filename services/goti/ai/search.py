"""The search: iterative deepening principal-variation search on raw bitboards.

The tree is walked on the side-relative ints of :mod:`goti.rules.movegen` (``mine``,
``theirs``, ``kings``, ``white``), never on :class:`~goti.rules.position.Position` objects,
and one recursive closure does all the work so that its helpers are cell lookups.

- **Transposition table**: a fixed number of slots in buckets of two, a bucket addressed by
  the low bits of the Zobrist hash (:mod:`goti.ai.zobrist`, updated move by move); a slot
  holds the full hash, the depth, the bound, the score and the best move.  The first slot
  keeps the bucket's deepest entry, the second the newest of the others: with every entry
  taking its slot, the many shallow ones near the leaves pushed out the few deep ones near
  the root, and a search of Master's length needed 10-20% more nodes to the same depth.  A table
  that never grows is never cleared: freeing half a million entries at once took 20-70 ms of
  CPU, more than a whole Quick move, in the middle of whichever move filled it.
- **Captures**: captures are compulsory, so a position with a capture is never a leaf: past
  the nominal depth the search carries on through every capture (quiescence) until a
  position is quiet.  Inside the nominal depth a capture is a ply like any other: giving a
  lone capture a free ply as well was measured at equal CPU time and bought nothing but a
  tree four times larger.
- **Move ordering**: the table's move, then killer moves (two per ply), then the history
  heuristic; captures that take more go first.  Late quiet moves are searched shallower
  first and searched again in full only when they surprise.
- **Draws inside the tree**: a position that repeats one since the last capture or man move
  scores as a draw, the first time inside the tree (the side that could avoid it would
  have), the third time counting the game before the root; reaching the 80th quiet ply is
  a draw too.  Scores that rest on such a draw depend on the path, so the table keeps only
  their move.
- **Endgame tables**: given the tables' probe, a position of few enough pieces is not
  searched but scored from them: a win as ``TABLE_WIN`` less its plies to conversion, a
  quiet draw as a sixteenth of its evaluation (all draws, but a man up is the one to play
  for), one with a capture pending as a draw.
  A trade into a won or a drawn ending is then seen at once, however deep.  From a root the
  tables cover, the search goes to the game's end as without them.
- **Memory**: a :class:`SearchMemory` carries the table and the history counts from one
  search to the next, as a game goes on.
- **Time**: limits are in CPU seconds of the searching thread (``time.thread_time``), so a
  busy machine makes the search shallower rather than rash.  The clock and the node count
  are checked every few hundred nodes; an iteration cut short still leaves the best move of
  the last finished one (or a better move the unfinished one had already proved).
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from goti.ai import zobrist
from goti.ai.endgames.values import LOSS_BASE
from goti.ai.evaluation import DRAW, WIN, Evaluator, make_evaluator
from goti.rules.game import MOVE_LIMIT_PLIES, PositionKey
from goti.rules.movegen import RawMove, capturers, captures, quiet_moves
from goti.rules.position import Position

MAX_DEPTH: Final = 64
"""The deepest nominal depth iterative deepening will try."""
WIN_BOUND: Final = WIN - 1000
"""Scores beyond this are wins or losses found in the tree."""
_INFINITY: Final = WIN + 1
_EXACT: Final = 0
_LOWER: Final = 1
_UPPER: Final = 2
_ASPIRATION: Final = 30
"""Half the width of the first window around the last iteration's score."""
_PLANNED_FROM: Final = 5
"""Iterations shallower than this are too quick to tell a settled choice from an open one."""
_START_SHARE: Final = 0.68
"""No new iteration once this share of a planned move's allowance is spent: the next one
would seldom finish within it, and an unfinished iteration seldom changes the move."""
_FINISH_SHARE: Final = 1.5
"""An iteration under way stops at this share of the allowance."""
_SCORE_FALL: Final = 20
"""A fall of this much (a fifth of a man) from the last iteration's score asks for more time."""
_CHECK_EVERY: Final = 256
"""The clock and the node limit are checked once every this many nodes."""
_MAX_PLY: Final = 256
TABLE_SLOTS: Final = 1 << 18
"""Slots of a transposition table (a power of two): a fresh search's table."""
SLOT_BYTES: Final = 400
"""About what a full slot holds in memory: the entry, its hash and score as ints, and the move
it keeps alive (measured on English games, compiled, 407 bytes)."""
MEMORY_TABLE_SLOTS: Final = 1 << 19
"""Slots of the table a :class:`SearchMemory` keeps from move to move unless told otherwise:
about 200 MB full, room for a Master move's tree and the moves before it."""
_FEWEST_SLOTS: Final = 1 << 10


def slots_within(megabytes: float) -> int:
    """The most slots, a power of two and at least 1,024, whose full table takes at most
    ``megabytes`` (10**6 bytes each)."""
    slots = _FEWEST_SLOTS
    while (slots << 1) * SLOT_BYTES <= megabytes * 1_000_000:
        slots <<= 1
    return slots


TABLE_WIN: Final = 10_000
"""The score of a position the endgame tables call won, less its plies to conversion: above
anything the evaluation gives, below the search's own forced results (``WIN_BOUND``)."""
_TABLE_DRAW_SHIFT: Final = 4
"""A drawn ending scores its evaluation over 16: a tie-break, never worth a man."""
_MAX_MOVES: Final = 64
"""Late-move reductions stop growing here (a move list is rarely longer)."""


def _reduction(depth: int, index: int) -> int:
    """How many plies shallower the ``index``-th quiet move at ``depth`` is first searched.

    The first two moves (the table's move and a killer, usually) are never reduced; later
    ones by one ply, by two from the fourth move at depth 3, by three from the seventh at
    depth 6.  Measured at equal CPU time, these plies buy more than they cost.
    """
    if index < 2 or depth < 2:
        return 0
    return 1 + (index >= 3 and depth >= 3) + (index >= 6 and depth >= 6)


_REDUCTIONS: Final = [[_reduction(d, i) for i in range(_MAX_MOVES)] for d in range(MAX_DEPTH + 1)]
_NO_REDUCTIONS: Final = [0] * _MAX_MOVES


TableValue = Callable[[int, int, int, bool], int | None]
"""The endgame tables' byte for side-relative bitboards (:mod:`goti.ai.endgames.values`),
None where they do not cover the position."""

_TreeSearch = Callable[[int, int, int, bool, int, int, int, int, int, int], int]
"""``node(mine, theirs, kings, white, depth, alpha, beta, ply, hash, quiet_plies)``."""


class _OutOfTimeError(Exception):
    """Raised inside the tree when the budget is spent; caught at the root."""


@dataclass(frozen=True, slots=True)
class SearchLimits:
    """When to stop.  With no limit at all the search goes to ``max_depth``."""

    max_depth: int = MAX_DEPTH
    cpu_seconds: float | None = None
    """CPU time of the searching thread; the search stops within a few hundred nodes of it."""
    max_nodes: int | None = None
    wall_deadline: float | None = None
    """A ``time.monotonic()`` instant to stop by whatever the CPU time: a caller's deadline,
    which a loaded machine could otherwise make the search overrun."""
    target_cpu_seconds: float | None = None
    """A typical move's CPU time, for a search that plans its own: it stops deepening early
    once its choice looks settled and goes on longer, up to ``cpu_seconds``, while its best
    move keeps changing or its score falls.  None spends ``cpu_seconds`` whatever happens."""


@dataclass(frozen=True, slots=True)
class SearchReport:
    """What a search found: ``move_index`` indexes ``position.raw_moves()``."""

    move_index: int
    score: int
    """For the side to move, in hundredths of a man; beyond ``WIN_BOUND`` a forced result."""
    depth: int
    """The nominal depth of the last finished iteration (0 when none finished)."""
    nodes: int
    seconds: float
    """CPU seconds spent."""
    proven_loss: bool = False
    """The last finished iteration proved that every root move loses by force; an iteration
    cut short proves nothing about the moves it did not reach."""


def history_hashes(keys: Sequence[PositionKey]) -> list[int]:
    """The Zobrist hashes of a game's repetition keys, oldest first."""
    return [zobrist.zobrist_hash(*key) for key in keys]


TableEntry = tuple[int, int, int, int, RawMove | None]
"""(Zobrist hash, depth, bound, score, best move); a depth of -1 keeps only the move."""
TranspositionTable = list[TableEntry | None]
"""Buckets of two slots, the first at ``hash & (len(table) - 2)``: there the bucket's deepest
entry, after it the newest of the others; an entry counts only where its hash is the
position's."""


def new_table(slots: int = TABLE_SLOTS) -> TranspositionTable:
    """An empty transposition table of ``slots`` slots (a power of two)."""
    if slots <= 0 or slots & (slots - 1):
        raise ValueError(f"a table's slots must be a power of two, not {slots}")
    return [None] * slots


def table_move(table: TranspositionTable, key: int) -> RawMove | None:
    """The best move the table holds for the position of hash ``key``, if any."""
    bucket = key & (len(table) - 2)
    entry = table[bucket]
    if entry is None or entry[0] != key:
        entry = table[bucket + 1]
    return entry[4] if entry is not None and entry[0] == key else None


@dataclass(slots=True)
class SearchMemory:
    """What one search leaves for the next: the transposition table and the history
    heuristic's counts.

    A game's next position is usually two plies below the last one searched, so most of that
    search's tree is still useful: the computer keeps one memory per variant and process for
    its timed levels.  The history counts are halved at every new search, so that what was
    learned lately weighs most.
    """

    table: TranspositionTable = field(default_factory=lambda: new_table(MEMORY_TABLE_SLOTS))
    history: defaultdict[RawMove, int] = field(default_factory=lambda: defaultdict(int))

    def renewed(self) -> SearchMemory:
        """This memory, made ready for a new search (the table needs nothing: old entries are
        still true, and new ones overwrite them)."""
        history = self.history
        for move in list(history):
            count = history[move] >> 1
            if count:
                history[move] = count
            else:
                del history[move]
        return self


class Searcher:
    """One search from one position, with the game's history for repetitions.

    ``history`` are the positions since the last capture or man move, oldest first and ending
    with ``position`` itself (as :attr:`goti.rules.game.GameState.repetition` holds them);
    ``quiet_plies`` is the game's move-limit clock.  A searcher keeps its transposition
    table, killers and history between calls, so deepening reuses what it learned; with
    ``memory`` it starts from (and adds to) what earlier searches learned.  ``contempt``
    (hundredths of a man) values a draw by repetition or by the move limit as that much worse
    than level for the side to move at ``position``.
    """

    def __init__(
        self,
        position: Position,
        *,
        history: Sequence[PositionKey] = (),
        quiet_plies: int = 0,
        evaluator: Evaluator | None = None,
        memory: SearchMemory | None = None,
        table_value: TableValue | None = None,
        table_pieces: int = 0,
        contempt: int = 0,
    ) -> None:
        self.position = position
        self._contempt = contempt
        variant = position.variant
        self.evaluate = evaluator if evaluator is not None else make_evaluator(variant)
        mine, theirs = position.sides()
        self._root = (mine, theirs, position.kings, position.white_to_move)
        hashes = history_hashes(history) if history else []
        root_hash = zobrist.zobrist_hash(
            position.white, position.black, position.kings, position.white_to_move
        )
        if not hashes or hashes[-1] != root_hash:
            hashes.append(root_hash)
        self._root_hash = root_hash
        # The reversible stretch cannot be longer than the history we were given.
        self._root_rev = min(quiet_plies, len(hashes) - 1)
        self._stack = hashes + [0] * (_MAX_PLY + 2)
        counts = Counter(hashes)
        self._seen_twice = frozenset(h for h, seen in counts.items() if seen >= 2)
        self._base = len(hashes) - 1
        self.root_moves: list[RawMove] = position.raw_moves()
        kept = (memory or SearchMemory(new_table())).renewed()
        self.table: TranspositionTable = kept.table
        self.killers: list[list[RawMove | None]] = [[None, None] for _ in range(_MAX_PLY + 2)]
        self.history: defaultdict[RawMove, int] = kept.history
        self._proven: tuple[int, int] | None = None
        self._node_limit = 1 << 62
        self._table_value = table_value
        # A root inside the tables is searched to the game's real end (the caller reads the
        # tables at the root): table scores would hide the forced wins and losses it proves.
        root_pieces = (position.white | position.black).bit_count()
        probing = table_value is not None and root_pieces > table_pieces
        self._table_pieces = table_pieces if probing else 0
        self._node, self._set_limits, self._count_nodes = self._build_tree_search()

    # -- the tree -----------------------------------------------------------------------

    @property
    def nodes(self) -> int:
        """Nodes searched so far, every call together."""
        return self._count_nodes()

    def _build_tree_search(
        self,
    ) -> tuple[_TreeSearch, Callable[[float, int, float], None], Callable[[], int]]:
        """The recursive search and its two controls: set the limits, read the node count."""
        variant = self.position.variant
        backwards = variant.men_capture_backwards
        flying = variant.flying_kings
        crown_stops = variant.crowning_ends_capture
        can_capture = capturers
        evaluate = self.evaluate
        table = self.table
        bucket_mask = len(table) - 2
        killers = self.killers
        history = self.history
        history_rank = history.__getitem__
        stack = self._stack
        base = self._base
        seen_twice = self._seen_twice
        men_keys = zobrist.MEN_BY_SIDE
        king_keys = zobrist.KINGS_BY_SIDE
        side_key = zobrist.WHITE_TO_MOVE
        clock = time.thread_time
        wall_clock = time.monotonic
        move_limit = MOVE_LIMIT_PLIES
        reductions = _REDUCTIONS
        table_value = self._table_value
        table_pieces = self._table_pieces
        contempt = self._contempt
        # A draw by repetition or by the move limit, valued for the side to move at a ply:
        # with contempt, worse than level for the side the search is for (to move at even
        # plies), so that it keeps a game going rather than repeat where it can.
        path_draw = (DRAW - contempt, DRAW + contempt)
        nodes = 0
        path_draws = 0
        next_check = _CHECK_EVERY
        deadline = float("inf")
        wall_deadline = float("inf")
        node_limit = 1 << 62

        def set_limits(new_deadline: float, new_node_limit: int, new_wall_deadline: float) -> None:
            nonlocal deadline, node_limit, wall_deadline, next_check
            deadline = new_deadline
            node_limit = new_node_limit
            wall_deadline = new_wall_deadline
            next_check = nodes

        def count_nodes() -> int:
            return nodes

        def node(
            mine: int,
            theirs: int,
            kings: int,
            white: bool,
            depth: int,
            alpha: int,
            beta: int,
            ply: int,
            key: int,
            rev: int,
        ) -> int:
            nonlocal nodes, next_check, path_draws
            nodes += 1
            if nodes >= next_check:
                if clock() > deadline or nodes >= node_limit or wall_clock() > wall_deadline:
                    raise _OutOfTimeError
                next_check = nodes + _CHECK_EVERY
            if rev >= 4:
                at = base + ply
                stack[at] = key
                earlier = at - 4
                oldest = at - rev
                # Inside the tree a first repetition is a draw: the side that could avoid it
                # would have.  A position from before the root draws only the third time.
                in_tree = oldest if oldest > base else base
                while earlier >= in_tree:
                    if stack[earlier] == key:
                        path_draws += 1
                        return path_draw[ply & 1]
                    earlier -= 2
                if oldest < base and key in seen_twice:
                    path_draws += 1
                    return path_draw[ply & 1]
            else:
                stack[base + ply] = key

            if (mine | theirs).bit_count() <= table_pieces and mine and theirs:
                # Inside the endgame tables: their verdict is exact, whatever the depth.
                assert table_value is not None
                value = table_value(mine, theirs, kings, white)
                if value is not None:
                    if value == 0:
                        # A draw with best play, nudged by the evaluation: of two drawn
                        # endings, the one a man up leaves the opponent more to get wrong.
                        # The evaluation reads a pending capture as no move at all (a
                        # loss), so such a draw is only a draw.
                        if can_capture(mine, theirs, kings, white, backwards, flying):
                            return DRAW
                        return evaluate(mine, theirs, kings, white) >> _TABLE_DRAW_SHIFT
                    if value < LOSS_BASE:
                        return TABLE_WIN - value
                    return value - LOSS_BASE - TABLE_WIN

            if depth <= 0:
                if not mine:
                    return ply - WIN
                if not can_capture(mine, theirs, kings, white, backwards, flying):
                    score = evaluate(mine, theirs, kings, white)
                    if score == -WIN:
                        # No move at all: lost, and the rules rank that above any draw.
                        return ply - WIN
                    if rev >= move_limit:
                        path_draws += 1
                        return path_draw[ply & 1]
                    return score
                # Quiescence: captures are forced, so there is no standing pat.
                if rev >= move_limit:
                    path_draws += 1
                    return path_draw[ply & 1]
                moves = captures(mine, theirs, kings, white, backwards, flying, crown_stops)
                if len(moves) > 1:
                    moves.sort(key=_captured_count, reverse=True)
                best = -_INFINITY
                for move in moves:
                    origin, target, taken, crowns, _, _ = move
                    child_kings = kings & ~taken
                    if kings & origin:
                        child_kings = child_kings ^ origin | target
                    elif crowns:
                        child_kings |= target
                    score = -node(
                        theirs & ~taken,
                        mine ^ origin | target,
                        child_kings,
                        not white,
                        0,
                        -beta,
                        -alpha,
                        ply + 1,
                        0,
                        0,
                    )
                    if score > best:
                        best = score
                        if score > alpha:
                            alpha = score
                            if score >= beta:
                                break
                return best

            best_move: RawMove | None = None
            bucket = key & bucket_mask
            entry = table[bucket]
            if entry is None or entry[0] != key:
                entry = table[bucket + 1]
            if entry is not None and entry[0] == key:
                _, stored_depth, bound, stored, best_move = entry
                if stored_depth >= depth:
                    if stored > WIN_BOUND:
                        stored -= ply
                    elif stored < -WIN_BOUND:
                        stored += ply
                    if bound == _EXACT:
                        return stored
                    if bound == _LOWER:
                        if stored >= beta:
                            return stored
                    elif stored <= alpha:
                        return stored

            capturing = can_capture(mine, theirs, kings, white, backwards, flying)
            if capturing:
                moves = captures(mine, theirs, kings, white, backwards, flying, crown_stops)
            else:
                moves = quiet_moves(mine, theirs, kings, white, flying)
                if not moves:
                    return ply - WIN
            if rev >= move_limit:
                path_draws += 1
                return path_draw[ply & 1]
            draws_before = path_draws

            count = len(moves)
            if count > 1:
                if capturing:
                    moves.sort(key=_captured_count, reverse=True)
                else:
                    moves.sort(key=history_rank, reverse=True)
                    first_killer, second_killer = killers[ply]
                    if second_killer is not None and second_killer in moves:
                        moves.remove(second_killer)
                        moves.insert(0, second_killer)
                    if first_killer is not None and first_killer in moves:
                        moves.remove(first_killer)
                        moves.insert(0, first_killer)
                if best_move is not None and best_move in moves:
                    moves.remove(best_move)
                    moves.insert(0, best_move)

            original_alpha = alpha
            best = -_INFINITY
            best_move = None
            black = not white
            child_ply = ply + 1

            if depth == 1 and not capturing:
                # The frontier: a child with no capture to make is a leaf, evaluated here
                # without a call, and a leaf's score is exact whatever the window.
                for move in moves:
                    origin, target, _, crowns, _, _ = move
                    child_mine = mine ^ origin | target
                    if kings & origin:
                        child_kings = kings ^ origin | target
                        child_rev = rev + 1
                    else:
                        child_kings = kings | target if crowns else kings
                        child_rev = 0
                    if child_rev < 4 and not can_capture(
                        theirs, child_mine, child_kings, black, backwards, flying
                    ):
                        nodes += 1
                        score = -evaluate(theirs, child_mine, child_kings, black)
                        if score == WIN:
                            score = WIN - child_ply  # the move leaves them no move at all
                    else:
                        child_key = key ^ side_key
                        if kings & origin:
                            keys = king_keys[white]
                            child_key ^= keys[origin.bit_length()] ^ keys[target.bit_length()]
                        elif crowns:
                            child_key ^= (
                                men_keys[white][origin.bit_length()]
                                ^ king_keys[white][target.bit_length()]
                            )
                        else:
                            keys = men_keys[white]
                            child_key ^= keys[origin.bit_length()] ^ keys[target.bit_length()]
                        score = -node(
                            theirs,
                            child_mine,
                            child_kings,
                            black,
                            0,
                            -beta,
                            -alpha,
                            child_ply,
                            child_key,
                            child_rev,
                        )
                    if score > best:
                        best = score
                        best_move = move
                        if score > alpha:
                            alpha = score
                            if score >= beta:
                                slot = killers[ply]
                                if slot[0] != move:
                                    slot[1] = slot[0]
                                    slot[0] = move
                                history[move] += 1
                                break
            else:
                child_depth = depth - 1
                my_men_keys = men_keys[white]
                my_king_keys = king_keys[white]
                their_men_keys = men_keys[black]
                their_king_keys = king_keys[black]
                reduction_of = reductions[depth] if not capturing else _NO_REDUCTIONS
                for index, move in enumerate(moves):
                    origin, target, taken, crowns, _, _ = move
                    child_mine = mine ^ origin | target
                    child_key = key ^ side_key
                    if taken:
                        child_theirs = theirs & ~taken
                        child_kings = kings & ~taken
                        captured = taken
                        while captured:
                            bit = captured & -captured
                            captured ^= bit
                            child_key ^= (
                                their_king_keys[bit.bit_length()]
                                if kings & bit
                                else their_men_keys[bit.bit_length()]
                            )
                        child_rev = 0
                    else:
                        child_theirs = theirs
                        child_kings = kings
                        child_rev = rev + 1
                    if kings & origin:
                        child_kings = child_kings ^ origin | target
                        child_key ^= (
                            my_king_keys[origin.bit_length()] ^ my_king_keys[target.bit_length()]
                        )
                    else:
                        child_rev = 0
                        if crowns:
                            child_kings |= target
                            child_key ^= (
                                my_men_keys[origin.bit_length()] ^ my_king_keys[target.bit_length()]
                            )
                        else:
                            child_key ^= (
                                my_men_keys[origin.bit_length()] ^ my_men_keys[target.bit_length()]
                            )
                    if index == 0:
                        score = -node(
                            child_theirs,
                            child_mine,
                            child_kings,
                            black,
                            child_depth,
                            -beta,
                            -alpha,
                            child_ply,
                            child_key,
                            child_rev,
                        )
                    else:
                        reduction = reduction_of[index] if index < _MAX_MOVES and not crowns else 0
                        if reduction:
                            # A late quiet move: first see, shallower, whether it can matter.
                            score = -node(
                                child_theirs,
                                child_mine,
                                child_kings,
                                black,
                                child_depth - reduction,
                                -alpha - 1,
                                -alpha,
                                child_ply,
                                child_key,
                                child_rev,
                            )
                        else:
                            score = alpha + 1
                        if score > alpha:
                            score = -node(
                                child_theirs,
                                child_mine,
                                child_kings,
                                black,
                                child_depth,
                                -alpha - 1,
                                -alpha,
                                child_ply,
                                child_key,
                                child_rev,
                            )
                            if alpha < score < beta:
                                score = -node(
                                    child_theirs,
                                    child_mine,
                                    child_kings,
                                    black,
                                    child_depth,
                                    -beta,
                                    -alpha,
                                    child_ply,
                                    child_key,
                                    child_rev,
                                )
                    if score > best:
                        best = score
                        best_move = move
                        if score > alpha:
                            alpha = score
                            if score >= beta:
                                if not capturing:
                                    slot = killers[ply]
                                    if slot[0] != move:
                                        slot[1] = slot[0]
                                        slot[0] = move
                                    history[move] += depth * depth
                                break

            if best >= beta:
                bound = _LOWER
            elif best > original_alpha:
                bound = _EXACT
            else:
                bound = _UPPER
            stored = best
            if stored > WIN_BOUND:
                stored += ply
            elif stored < -WIN_BOUND:
                stored -= ply
            if path_draws != draws_before and (rev or contempt):
                # A draw by repetition or by the move limit below depends on the path that
                # led here, not only on the position: keep the move, not the score.  With
                # contempt it also depends on which side the search is for, which the next
                # search to read the table may not share.
                new_entry: TableEntry = (key, -1, bound, stored, best_move)
            else:
                new_entry = (key, depth, bound, stored, best_move)
            bucket = key & bucket_mask
            kept_entry = table[bucket]
            if kept_entry is None or kept_entry[0] == key or kept_entry[1] <= new_entry[1]:
                table[bucket] = new_entry
            else:
                table[bucket + 1] = new_entry
            return best

        return node, set_limits, count_nodes

    # -- the root -----------------------------------------------------------------------

    def _child(self, move: RawMove) -> tuple[int, int, int, bool, int, int]:
        """The child of the root after ``move``: bitboards, side, hash and quiet clock."""
        mine, theirs, kings, white = self._root
        return play_hashed(mine, theirs, kings, white, self._root_hash, self._root_rev, move)

    def principal_variation(self, first: RawMove, length: int) -> list[RawMove]:
        """The line the search expects after the root move ``first``, from the table.

        At most ``length`` moves; it stops where the table has no move for a position or
        holds one that is not legal there (a hash collision or an overwritten entry).
        """
        variant = self.position.variant
        line = [first]
        mine, theirs, kings, white, key, rev = self._child(first)
        while len(line) < length:
            move = table_move(self.table, key)
            if move is None:
                break
            legal = captures(
                mine,
                theirs,
                kings,
                white,
                variant.men_capture_backwards,
                variant.flying_kings,
                variant.crowning_ends_capture,
            ) or quiet_moves(mine, theirs, kings, white, variant.flying_kings)
            if move not in legal:
                break
            line.append(move)
            mine, theirs, kings, white, key, rev = play_hashed(
                mine, theirs, kings, white, key, rev, move
            )
        return line

    def _start_clock(self, limits: SearchLimits) -> float:
        started = time.thread_time()
        self._node_limit = self.nodes + limits.max_nodes if limits.max_nodes else 1 << 62
        seconds = limits.cpu_seconds
        if limits.target_cpu_seconds is not None:
            seconds = _capped(limits.target_cpu_seconds * _FINISH_SHARE, seconds)
        self._stop_after(started, seconds, limits)
        return started

    def _stop_after(self, started: float, seconds: float | None, limits: SearchLimits) -> None:
        self._set_limits(
            started + seconds if seconds is not None else float("inf"),
            self._node_limit,
            limits.wall_deadline if limits.wall_deadline is not None else float("inf"),
        )

    def score_move(self, move: RawMove, depth: int, alpha: int, beta: int) -> int:
        """The score of one root move searched to ``depth`` plies (including itself)."""
        mine, theirs, kings, white, key, rev = self._child(move)
        self._stack[self._base] = self._root_hash
        return -self._node(mine, theirs, kings, white, depth - 1, -beta, -alpha, 1, key, rev)

    def score_all(self, depth: int, limits: SearchLimits | None = None) -> list[int] | None:
        """The exact score of every root move at ``depth``; None when the limits cut it short."""
        self._start_clock(limits or SearchLimits())
        try:
            return [self.score_move(move, depth, -_INFINITY, _INFINITY) for move in self.root_moves]
        except _OutOfTimeError:
            return None

    def _root_pass(self, depth: int, order: list[int], alpha: int, beta: int) -> tuple[int, int]:
        """One principal-variation pass over the root moves in ``order`` within a window.

        Returns the best move's index and score (a bound when it falls outside the window).
        A move that proves better than ``alpha`` is kept in ``_proven`` as soon as it is
        known, for a search that runs out of time before the pass ends.
        """
        best_index = order[0]
        best_score = -_INFINITY
        bound = alpha
        for position_in_order, index in enumerate(order):
            move = self.root_moves[index]
            if position_in_order == 0:
                score = self.score_move(move, depth, bound, beta)
            else:
                score = self.score_move(move, depth, bound, bound + 1)
                if bound < score < beta:
                    score = self.score_move(move, depth, bound, beta)
            if score > best_score:
                best_score = score
                best_index = index
                if score > bound:
                    bound = score
                    self._proven = (index, score)
                    if score >= beta:
                        break
        return best_index, best_score

    def _iteration(self, depth: int, order: list[int], last_score: int) -> tuple[int, int]:
        """One iteration of the deepening: passes over the root moves in a window around the
        last iteration's score, widened on the side the score falls out of until it falls in.

        Returns the best move's index and its score; ``_proven`` starts the iteration empty.
        """
        window = _ASPIRATION if depth >= 3 and abs(last_score) < WIN_BOUND else _INFINITY
        low = max(last_score - window, -_INFINITY)
        high = min(last_score + window, _INFINITY)
        self._proven = None
        while True:
            index, score = self._root_pass(depth, order, low, high)
            if score <= low and low > -_INFINITY:
                low = -_INFINITY
            elif score >= high and high < _INFINITY:
                high = _INFINITY
                order.remove(index)
                order.insert(0, index)
            else:
                return index, score

    def iterate(self, limits: SearchLimits) -> SearchReport:
        """Iterative deepening until ``limits``; always returns a legal move's index.

        Raises ``ValueError`` when the side to move has no legal move.
        """
        if not self.root_moves:
            raise ValueError("the side to move has no legal move")
        started = self._start_clock(limits)
        first_nodes = self.nodes
        order = list(range(len(self.root_moves)))
        best_index = order[0]
        best_score = 0
        finished_depth = 0
        proven_loss = False
        if len(order) == 1:
            # A forced move: search a little only to report a score.
            limits = SearchLimits(
                max_depth=min(limits.max_depth, 4),
                cpu_seconds=limits.cpu_seconds,
                max_nodes=limits.max_nodes,
                wall_deadline=limits.wall_deadline,
            )
        target = limits.target_cpu_seconds
        changes = 0.0
        for depth in range(1, limits.max_depth + 1):
            previous_index, previous_score = best_index, best_score
            try:
                best_index, best_score = self._iteration(depth, order, best_score)
            except _OutOfTimeError:
                # Set to None in _iteration, not here: mypy would read it here as that None,
                # and mypyc would compile the reading so.
                if self._proven is not None:
                    best_index, best_score = self._proven
                break
            finished_depth = depth
            proven_loss = best_score < -WIN_BOUND
            order.remove(best_index)
            order.insert(0, best_index)
            if abs(best_score) > WIN_BOUND and WIN - abs(best_score) <= depth:
                break  # a forced result within the horizon: deeper will not change it
            if target is not None and depth >= _PLANNED_FROM:
                # Recent changes of the best move count more than old ones.
                changes = changes / 2 + (best_index != previous_index)
                allowance = target * (1.0 + changes)
                if best_score <= previous_score - _SCORE_FALL:
                    allowance *= 1.5
                if time.thread_time() - started >= allowance * _START_SHARE:
                    break
                self._stop_after(
                    started, _capped(allowance * _FINISH_SHARE, limits.cpu_seconds), limits
                )
        return SearchReport(
            move_index=best_index,
            score=best_score,
            depth=finished_depth,
            nodes=self.nodes - first_nodes,
            seconds=time.thread_time() - started,
            proven_loss=proven_loss,
        )


def _capped(seconds: float, cap: float | None) -> float:
    return seconds if cap is None else min(seconds, cap)


def play_hashed(
    mine: int, theirs: int, kings: int, white: bool, key: int, rev: int, move: RawMove
) -> tuple[int, int, int, bool, int, int]:
    """A move on side-relative bitboards with its hash and quiet clock: the child position,
    sides swapped, as ``(mine, theirs, kings, white, hash, quiet_plies)``."""
    origin, target, taken, crowns, _, _ = move
    child_key = key ^ zobrist.WHITE_TO_MOVE
    mover_men = zobrist.MEN_BY_SIDE[white]
    mover_kings = zobrist.KINGS_BY_SIDE[white]
    captured = taken
    while captured:
        bit = captured & -captured
        captured ^= bit
        keys = zobrist.KINGS_BY_SIDE if kings & bit else zobrist.MEN_BY_SIDE
        child_key ^= keys[not white][bit.bit_length()]
    child_kings = kings & ~taken
    if kings & origin:
        child_kings = child_kings ^ origin | target
        child_key ^= mover_kings[origin.bit_length()] ^ mover_kings[target.bit_length()]
        child_rev = 0 if taken else rev + 1
    else:
        child_rev = 0
        if crowns:
            child_kings |= target
            child_key ^= mover_men[origin.bit_length()] ^ mover_kings[target.bit_length()]
        else:
            child_key ^= mover_men[origin.bit_length()] ^ mover_men[target.bit_length()]
    return theirs & ~taken, mine ^ origin | target, child_kings, not white, child_key, child_rev


def _captured_count(move: RawMove) -> int:
    return move[2].bit_count()
