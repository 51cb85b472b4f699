"""What a table stores for a position: one byte, the outcome and the distance to conversion.

The distance counts plies until the winner converts: a capture or a promotion that keeps
the win (the game then goes on in a smaller or more-crowned table), or the last move of the
game.  A win takes the shortest way there and a loss holds out longest.  Played move after
move, it always makes progress, because each conversion is irreversible.

- ``0``: a draw.
- ``1..127``: a win in that many plies (127: that many or more).
- ``128 + d`` with ``d`` in ``0..126``: a loss in ``d`` plies (0: no legal move now).
- ``255`` only while a table is built: not known yet.
"""

from __future__ import annotations

import enum
from typing import Final

DRAW_BYTE: Final = 0
LOSS_BASE: Final = 128
MAX_WIN_PLIES: Final = 127
MAX_LOSS_PLIES: Final = 126
UNKNOWN: Final = 255


class Outcome(enum.Enum):
    """The result with best play, for the side to move."""

    WIN = "win"
    LOSS = "loss"
    DRAW = "draw"


def win(plies: int) -> int:
    """The byte of a win in ``plies`` (1 or more), capped."""
    return min(plies, MAX_WIN_PLIES)


def loss(plies: int) -> int:
    """The byte of a loss in ``plies`` (0 or more), capped."""
    return LOSS_BASE + min(plies, MAX_LOSS_PLIES)


def is_win(value: int) -> bool:
    """Whether a stored byte is a win."""
    return 0 < value < LOSS_BASE


def is_loss(value: int) -> bool:
    """Whether a stored byte is a loss."""
    return LOSS_BASE <= value < UNKNOWN


def outcome(value: int) -> Outcome:
    """The outcome a stored byte says."""
    if value == DRAW_BYTE:
        return Outcome.DRAW
    return Outcome.WIN if value < LOSS_BASE else Outcome.LOSS


def plies(value: int) -> int:
    """The plies to conversion a stored byte says (0 for a draw)."""
    return value - LOSS_BASE if value >= LOSS_BASE else value
