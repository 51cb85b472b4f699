"""Perft: count the leaf positions of the move tree, the standard check of a move generator.

The count at the last ply is taken in bulk (the moves of a position are counted, not
played), as every published perft figure allows.
"""

from __future__ import annotations

from goti.rules.movegen import captures, count_quiet_moves, play, quiet_moves
from goti.rules.position import Position


def perft(position: Position, depth: int, *, unique: bool = False) -> int:
    """The number of move sequences of ``depth`` plies from ``position``.

    Every capture order counts as its own move; with ``unique`` the captures of a position
    that share their origin, target, captured pieces and crowning count once ("drop
    duplicates" in the published tables).

    >>> from goti.rules.variants import ENGLISH
    >>> perft(Position.initial(ENGLISH), 3)
    302
    """
    if depth < 0:
        raise ValueError(f"depth must be 0 or more, not {depth}")
    if depth == 0:
        return 1
    variant = position.variant
    mine, theirs = position.sides()
    return _perft(
        mine,
        theirs,
        position.kings,
        position.white_to_move,
        depth,
        variant.men_capture_backwards,
        variant.flying_kings,
        variant.crowning_ends_capture,
        unique,
    )


def divide(position: Position, depth: int, *, unique: bool = False) -> dict[str, int]:
    """Perft split by first move: each legal move's notation and the count below it."""
    if depth < 1:
        raise ValueError(f"divide needs a depth of 1 or more, not {depth}")
    counts: dict[str, int] = {}
    moves = position.legal_moves.unique() if unique else list(position.legal_moves)
    for move in moves:
        counts[position.notation(move)] = perft(position.push(move), depth - 1, unique=unique)
    return counts


def _perft(
    mine: int,
    theirs: int,
    kings: int,
    white: bool,
    depth: int,
    backwards: bool,
    flying: bool,
    crown_stops: bool,
    unique: bool,
) -> int:
    moves = captures(mine, theirs, kings, white, backwards, flying, crown_stops)
    if moves:
        if unique:
            moves = list({(m[0], m[1], m[2], m[3]): m for m in moves}.values())
        if depth == 1:
            return len(moves)
    elif depth == 1:
        return count_quiet_moves(mine, theirs, kings, white, flying)
    else:
        moves = quiet_moves(mine, theirs, kings, white, flying)
    total = 0
    child_depth = depth - 1
    black = not white
    for move in moves:
        child_mine, child_theirs, child_kings = play(mine, theirs, kings, move)
        total += _perft(
            child_theirs,
            child_mine,
            child_kings,
            black,
            child_depth,
            backwards,
            flying,
            crown_stops,
            unique,
        )
    return total
