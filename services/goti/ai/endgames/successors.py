"""The moves of a table position and what the tables say about where they lead.

Moves come from :mod:`goti.rules.movegen`, so captures are compulsory with free choice
among them, as in Goti's rules for both variants, and a Russian man crowned in the middle of
a capture carries on as a king.  The side to move is always seen as White.
"""

from __future__ import annotations

from typing import Protocol

from goti.ai.endgames.values import loss
from goti.rules.movegen import RawMove, captures, quiet_moves
from goti.rules.variants import Variant


class Values(Protocol):
    """Stored bytes by position: the tables a move out of a table leads into."""

    def value_sides(self, mine: int, theirs: int, kings: int, white: bool) -> int | None:
        """The byte of side-relative bitboards (``mine`` moves), None when not covered."""
        ...


def legal_moves(variant: Variant, mine: int, theirs: int, kings: int) -> list[RawMove]:
    """The legal moves of the side to move, seen as White."""
    moves = captures(
        mine,
        theirs,
        kings,
        True,
        variant.men_capture_backwards,
        variant.flying_kings,
        variant.crowning_ends_capture,
    )
    return moves or quiet_moves(mine, theirs, kings, True, variant.flying_kings)


def after(mine: int, theirs: int, kings: int, move: RawMove) -> tuple[int, int, int]:
    """``(mine, theirs, kings)`` after a move, still from the mover's side."""
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


def child_value(tables: Values, mine: int, theirs: int, kings: int) -> int:
    """The byte of the position after a move, for the opponent, who is then to move.

    ``mine``, ``theirs`` and ``kings`` are the position after the move from the mover's side;
    the opponent is to move and plays as Black.  An opponent left with no piece has lost.
    """
    if not theirs:
        return loss(0)
    value = tables.value_sides(theirs, mine, kings, False)
    if value is None:
        raise LookupError("a move leads out of the tables there are")
    return value
