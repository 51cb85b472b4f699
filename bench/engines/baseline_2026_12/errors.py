"""The precise errors of the rules library.  Every one is a ``ValueError``."""

from __future__ import annotations

import enum
from collections.abc import Sequence


class InvalidFenError(ValueError):
    """A PDN FEN string that does not describe a position; ``token`` is the offending part."""

    def __init__(self, message: str, *, token: str = "") -> None:
        super().__init__(message)
        self.token = token


class InvalidPdnError(ValueError):
    """PDN text that cannot be read as games (bad movetext, an illegal move, a bad FEN tag)."""


class InvalidMoveError(ValueError):
    """Move text or a path that is not a move at all (syntax, unknown square)."""


class IllegalReason(enum.Enum):
    """Why a well-formed move is not allowed in this position."""

    ILLEGAL_MOVE = "ILLEGAL_MOVE"
    """The move is not among the legal moves (wrong piece, blocked, wrong direction...)."""
    CAPTURE_REQUIRED = "CAPTURE_REQUIRED"
    """A capture is compulsory and the move is not one."""
    INCOMPLETE_CAPTURE = "INCOMPLETE_CAPTURE"
    """The capture stops while the capturing piece can and must carry on."""


class IllegalMoveError(ValueError):
    """A well-formed move that the rules do not allow here; ``legal`` lists what is allowed."""

    def __init__(self, message: str, *, reason: IllegalReason, legal: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.reason = reason
        self.legal = tuple(legal)


class AmbiguousMoveError(ValueError):
    """Short move text that names several legal moves; ``candidates`` lists them in full."""

    def __init__(self, message: str, *, candidates: Sequence[str]) -> None:
        super().__init__(message)
        self.candidates = tuple(candidates)


class Refusal(enum.Enum):
    """Why the game refuses an action (a move, a draw offer or answer, a resignation)."""

    GAME_OVER = "GAME_OVER"
    """The game has already ended."""
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    """Only the side to move may do this now."""
    DRAW_OFFER_TOO_SOON = "DRAW_OFFER_TOO_SOON"
    """The side offered a draw less than five of its own moves ago."""
    DRAW_OFFER_BEFORE_BOTH_MOVED = "DRAW_OFFER_BEFORE_BOTH_MOVED"
    """A draw may be offered only once both sides have moved."""
    DRAW_ALREADY_OFFERED = "DRAW_ALREADY_OFFERED"
    """This side's draw offer is already open."""
    DRAW_OFFER_PENDING = "DRAW_OFFER_PENDING"
    """The opponent's offer is open: accept or decline it rather than offer another."""
    NO_DRAW_OFFER = "NO_DRAW_OFFER"
    """There is no open draw offer from the opponent to answer."""
    NOTHING_TO_TAKE_BACK = "NOTHING_TO_TAKE_BACK"
    """There is no move of this side to take back."""


class ActionRefusedError(ValueError):
    """A game action refused by the rules of play; ``moves_to_wait`` for a too-early offer."""

    def __init__(self, message: str, *, reason: Refusal, moves_to_wait: int = 0) -> None:
        super().__init__(message)
        self.reason = reason
        self.moves_to_wait = moves_to_wait
