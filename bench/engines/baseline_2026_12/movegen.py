"""Move generation on bitboards: the engine room under ``Position`` and the search.

Everything here works on plain ints in the padded layout of :mod:`goti.rules.squares` and is
side-relative: ``mine`` are the pieces of the side to move, ``theirs`` the opponent's,
``kings`` the kings of both sides, and ``white`` says which way the side to move's men go.

A generated move is a :data:`RawMove` tuple ``(origin, target, captured, crowns, path,
captured_in_order)``: single-bit origin and target, the bitboard of captured pieces, whether
the moving man is crowned, and for captures the landing squares (origin first) and the
captured pieces in the order they were jumped, all as single-bit ints.  A quiet move has
empty ``path`` and ``captured_in_order`` tuples; nothing is allocated for it but the tuple.
"""

from __future__ import annotations

from typing import Final

from .squares import (
    BLACK_CROWN_ROW,
    BOARD,
    DIRECTIONS,
    DOWN_LEFT,
    DOWN_RIGHT,
    UP_LEFT,
    UP_RIGHT,
    WHITE_CROWN_ROW,
)

RawMove = tuple[int, int, int, bool, tuple[int, ...], tuple[int, ...]]

_NO_PATH: Final[tuple[int, ...]] = ()

_SIDEWAYS: Final[dict[int, tuple[int, int]]] = {
    DOWN_LEFT: (DOWN_RIGHT, UP_LEFT),
    UP_RIGHT: (DOWN_RIGHT, UP_LEFT),
    DOWN_RIGHT: (DOWN_LEFT, UP_RIGHT),
    UP_LEFT: (DOWN_LEFT, UP_RIGHT),
}
"""For each direction, the two directions at right angles to it."""

_ONWARD: Final[dict[int, tuple[int, int, int]]] = {d: (d, *_SIDEWAYS[d]) for d in DIRECTIONS}
"""For each direction, itself and the two at right angles: every way but back."""

_WHITE_FORWARD: Final = (UP_RIGHT, UP_LEFT)
_BLACK_FORWARD: Final = (DOWN_LEFT, DOWN_RIGHT)


def _jumpers(pieces: int, theirs: int, empty: int, steps: tuple[int, ...]) -> int:
    """The pieces that can jump an adjacent opponent in one of ``steps``."""
    found = 0
    for step in steps:
        if step > 0:
            found |= (((empty >> step) & theirs) >> step) & pieces
        else:
            found |= (((empty << -step) & theirs) << -step) & pieces
    return found


def _flying_capturers(kings: int, theirs: int, empty: int) -> int:
    """The flying kings that can capture: an opponent at the end of an empty run, then empty."""
    found = 0
    for step in DIRECTIONS:
        if step > 0:
            # Squares from which an opponent piece is next along the diagonal, then empty.
            reach = ((empty >> step) & theirs) >> step
            while reach:
                found |= reach & kings
                reach = (reach & empty) >> step
        else:
            reach = ((empty << -step) & theirs) << -step
            while reach:
                found |= reach & kings
                reach = (reach & empty) << -step
    return found


def capturers(
    mine: int,
    theirs: int,
    kings: int,
    white: bool,
    men_capture_backwards: bool,
    flying_kings: bool,
) -> int:
    """The bitboard of the pieces of the side to move that can capture (0 when none can)."""
    empty = BOARD & ~(mine | theirs)
    men = mine & ~kings
    own_kings = mine & kings
    if men_capture_backwards:
        found = _jumpers(men, theirs, empty, DIRECTIONS)
    else:
        found = _jumpers(men, theirs, empty, _WHITE_FORWARD if white else _BLACK_FORWARD)
    if own_kings:
        if flying_kings:
            found |= _flying_capturers(own_kings, theirs, empty)
        else:
            found |= _jumpers(own_kings, theirs, empty, DIRECTIONS)
    return found


def captures(
    mine: int,
    theirs: int,
    kings: int,
    white: bool,
    men_capture_backwards: bool,
    flying_kings: bool,
    crowning_ends_capture: bool,
) -> list[RawMove]:
    """Every capture for the side to move, one entry per capture order (may be empty)."""
    out: list[RawMove] = []
    pieces = capturers(mine, theirs, kings, white, men_capture_backwards, flying_kings)
    if not pieces:
        return out
    occupied = mine | theirs
    crown_row = WHITE_CROWN_ROW if white else BLACK_CROWN_ROW
    if men_capture_backwards:
        man_steps: tuple[int, ...] = DIRECTIONS
    else:
        man_steps = _WHITE_FORWARD if white else _BLACK_FORWARD
    while pieces:
        origin = pieces & -pieces
        pieces ^= origin
        # The moving piece is lifted: its own square is free to pass or land on again.
        empty = BOARD & ~(occupied ^ origin)
        if origin & kings:
            if flying_kings:
                _flying_jumps(
                    origin, origin, DIRECTIONS, theirs, empty, 0, (origin,), (), out, False
                )
            else:
                _short_jumps(
                    origin, origin, DIRECTIONS, theirs, empty, 0, (origin,), (), out, 0, True
                )
        elif crowning_ends_capture:
            _short_jumps(
                origin, origin, man_steps, theirs, empty, 0, (origin,), (), out, crown_row, True
            )
        else:
            _man_jumps_then_fly(
                origin, origin, man_steps, theirs, empty, 0, (origin,), (), out, crown_row
            )
    return out


def _short_jumps(
    origin: int,
    at: int,
    steps: tuple[int, ...],
    capturable: int,
    empty: int,
    captured: int,
    path: tuple[int, ...],
    order: tuple[int, ...],
    out: list[RawMove],
    crown_row: int,
    crowning_ends: bool,
) -> None:
    """Continue a capture by one-square jumps from ``at`` (English men and kings).

    ``crown_row`` is 0 for a king; a man that lands there is crowned and, as
    ``crowning_ends`` says for English, its move ends.
    """
    extended = False
    for step in steps:
        if step > 0:
            over = at << step
            land = over << step
        else:
            over = at >> -step
            land = over >> -step
        if over & capturable and land & empty:
            extended = True
            if land & crown_row:
                out.append((origin, land, captured | over, True, (*path, land), (*order, over)))
            else:
                _short_jumps(
                    origin,
                    land,
                    steps,
                    capturable & ~over,
                    empty,
                    captured | over,
                    (*path, land),
                    (*order, over),
                    out,
                    crown_row,
                    crowning_ends,
                )
    if not extended and captured:
        out.append((origin, at, captured, False, path, order))


def _man_jumps_then_fly(
    origin: int,
    at: int,
    steps: tuple[int, ...],
    capturable: int,
    empty: int,
    captured: int,
    path: tuple[int, ...],
    order: tuple[int, ...],
    out: list[RawMove],
    crown_row: int,
) -> None:
    """Continue a man's capture where crowning mid-capture makes it a flying king at once."""
    extended = False
    for step in steps:
        if step > 0:
            over = at << step
            land = over << step
        else:
            over = at >> -step
            land = over >> -step
        if over & capturable and land & empty:
            extended = True
            next_path = (*path, land)
            next_order = (*order, over)
            if land & crown_row:
                carried_on = _flying_jumps(
                    origin,
                    land,
                    _ONWARD[step],
                    capturable & ~over,
                    empty,
                    captured | over,
                    next_path,
                    next_order,
                    out,
                    True,
                )
                if not carried_on:
                    out.append((origin, land, captured | over, True, next_path, next_order))
            else:
                _man_jumps_then_fly(
                    origin,
                    land,
                    steps,
                    capturable & ~over,
                    empty,
                    captured | over,
                    next_path,
                    next_order,
                    out,
                    crown_row,
                )
    if not extended and captured:
        out.append((origin, at, captured, False, path, order))


def _flying_jumps(
    origin: int,
    at: int,
    steps: tuple[int, ...],
    capturable: int,
    empty: int,
    captured: int,
    path: tuple[int, ...],
    order: tuple[int, ...],
    out: list[RawMove],
    crowns: bool,
) -> bool:
    """Continue a flying king's capture from ``at`` along ``steps``; True if it could capture.

    After jumping a piece the king may land on any empty square beyond it, but where a
    further capture is possible from some of those squares it must land on one of them.
    Carrying on along the same diagonal is written with the first landing square only (the
    square just behind the captured piece), so it is explored from that square alone.
    """
    found = False
    for step in steps:
        if step > 0:
            target = at << step
            while target & empty:
                target <<= step
            if not target & capturable:
                continue
            land = target << step
        else:
            target = at >> -step
            while target & empty:
                target >>= -step
            if not target & capturable:
                continue
            land = target >> -step
        if not land & empty:
            continue
        found = True
        still_capturable = capturable & ~target
        now_captured = captured | target
        next_order = (*order, target)
        onward = _ONWARD[step]
        sideways = _SIDEWAYS[step]
        must_carry_on = False
        stops: list[int] = []
        first = True
        while land & empty:
            if _flying_jumps(
                origin,
                land,
                onward if first else sideways,
                still_capturable,
                empty,
                now_captured,
                (*path, land),
                next_order,
                out,
                crowns,
            ):
                must_carry_on = True
            elif not must_carry_on:
                stops.append(land)
            first = False
            land = land << step if step > 0 else land >> -step
        if not must_carry_on:
            for stop in stops:
                out.append((origin, stop, now_captured, crowns, (*path, stop), next_order))
    return found


def quiet_moves(
    mine: int, theirs: int, kings: int, white: bool, flying_kings: bool
) -> list[RawMove]:
    """Every non-capturing move for the side to move (call only when no capture exists)."""
    empty = BOARD & ~(mine | theirs)
    men = mine & ~kings
    own_kings = mine & kings
    out: list[RawMove] = []
    append = out.append
    if white:
        for step in (4, 5):
            targets = (men >> step) & empty
            while targets:
                target = targets & -targets
                targets ^= target
                append(
                    (target << step, target, 0, bool(target & WHITE_CROWN_ROW), _NO_PATH, _NO_PATH)
                )
    else:
        for step in (4, 5):
            targets = (men << step) & empty
            while targets:
                target = targets & -targets
                targets ^= target
                append(
                    (target >> step, target, 0, bool(target & BLACK_CROWN_ROW), _NO_PATH, _NO_PATH)
                )
    if own_kings:
        if flying_kings:
            for step in (4, 5):
                # Slide every king at once, one square per round, until all are blocked.
                movers = own_kings
                distance = 0
                while movers:
                    distance += step
                    movers = (movers << step) & empty
                    bits = movers
                    while bits:
                        target = bits & -bits
                        bits ^= target
                        append((target >> distance, target, 0, False, _NO_PATH, _NO_PATH))
                movers = own_kings
                distance = 0
                while movers:
                    distance += step
                    movers = (movers >> step) & empty
                    bits = movers
                    while bits:
                        target = bits & -bits
                        bits ^= target
                        append((target << distance, target, 0, False, _NO_PATH, _NO_PATH))
        else:
            for step in (4, 5):
                targets = (own_kings << step) & empty
                while targets:
                    target = targets & -targets
                    targets ^= target
                    append((target >> step, target, 0, False, _NO_PATH, _NO_PATH))
                targets = (own_kings >> step) & empty
                while targets:
                    target = targets & -targets
                    targets ^= target
                    append((target << step, target, 0, False, _NO_PATH, _NO_PATH))
    return out


def count_quiet_moves(mine: int, theirs: int, kings: int, white: bool, flying_kings: bool) -> int:
    """How many non-capturing moves the side to move has, without listing them."""
    empty = BOARD & ~(mine | theirs)
    men = mine & ~kings
    own_kings = mine & kings
    if white:
        count = ((men >> 4) & empty).bit_count() + ((men >> 5) & empty).bit_count()
    else:
        count = ((men << 4) & empty).bit_count() + ((men << 5) & empty).bit_count()
    if own_kings:
        if flying_kings:
            for step in (4, 5):
                movers = (own_kings << step) & empty
                while movers:
                    count += movers.bit_count()
                    movers = (movers << step) & empty
                movers = (own_kings >> step) & empty
                while movers:
                    count += movers.bit_count()
                    movers = (movers >> step) & empty
        else:
            count += (
                ((own_kings << 4) & empty).bit_count()
                + ((own_kings << 5) & empty).bit_count()
                + ((own_kings >> 4) & empty).bit_count()
                + ((own_kings >> 5) & empty).bit_count()
            )
    return count


def play(mine: int, theirs: int, kings: int, move: RawMove) -> tuple[int, int, int]:
    """The side-relative position after ``move``: ``(mine, theirs, kings)``, not yet swapped."""
    origin, target, captured, crowns, _, _ = move
    mine = (mine & ~origin) | target
    if captured:
        theirs &= ~captured
        kings &= ~captured
    if kings & origin:
        kings = (kings & ~origin) | target
    elif crowns:
        kings |= target
    return mine, theirs, kings
