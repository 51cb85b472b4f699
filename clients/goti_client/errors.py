"""What a failed call raises: one exception family, chosen by the reason Goti sends.

Every Goti failure carries a gRPC status code and, in its ``google.rpc.ErrorInfo``, a reason
such as ``ILLEGAL_MOVE`` with string metadata.  :func:`error_from_rpc` turns a failed call into
the matching :class:`GotiError` subclass; every one keeps the ``code``, the ``reason`` (a
:class:`Reason`, :attr:`Reason.UNKNOWN` when the server sent none or one this SDK does not
know) and the ``metadata``.  ``str(error)`` is the server's English message, for developers
and logs; apps choose what to show from the class or the reason.

Catch the family for what the player should see, the reason for the exact case::

    try:
        await goti.play(table_id, "11-16")
    except goti_client.IllegalMoveError as error:
        print("legal moves:", ", ".join(error.legal_moves))
    except goti_client.StaleSeqError:
        ...  # catch up from the table's events, then let the player act again
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

import grpc

from goti.api.error_status import ErrorStatus


class Reason(enum.StrEnum):
    """The reasons of errors.proto, as the ``ErrorInfo.reason`` strings Goti sends."""

    UNKNOWN = ""
    """No Goti reason: a transport failure, or a reason newer than this SDK."""
    INVALID_REQUEST = "INVALID_REQUEST"
    REQUEST_TOO_LARGE = "REQUEST_TOO_LARGE"
    REQUEST_ID_REUSED = "REQUEST_ID_REUSED"
    INVALID_MOVE = "INVALID_MOVE"
    ILLEGAL_MOVE = "ILLEGAL_MOVE"
    CAPTURE_REQUIRED = "CAPTURE_REQUIRED"
    INCOMPLETE_CAPTURE = "INCOMPLETE_CAPTURE"
    AMBIGUOUS_MOVE = "AMBIGUOUS_MOVE"
    INVALID_FEN = "INVALID_FEN"
    INVALID_GAME_STATE = "INVALID_GAME_STATE"
    INVALID_PDN = "INVALID_PDN"
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    GAME_OVER = "GAME_OVER"
    WAITING_FOR_OPPONENT = "WAITING_FOR_OPPONENT"
    GAME_IN_PROGRESS = "GAME_IN_PROGRESS"
    DRAW_OFFER_TOO_SOON = "DRAW_OFFER_TOO_SOON"
    DRAW_OFFER_BEFORE_BOTH_MOVED = "DRAW_OFFER_BEFORE_BOTH_MOVED"
    DRAW_ALREADY_OFFERED = "DRAW_ALREADY_OFFERED"
    DRAW_OFFER_PENDING = "DRAW_OFFER_PENDING"
    NO_DRAW_OFFER = "NO_DRAW_OFFER"
    NOTHING_TO_TAKE_BACK = "NOTHING_TO_TAKE_BACK"
    TAKE_BACK_NOT_ALLOWED = "TAKE_BACK_NOT_ALLOWED"
    TABLE_FULL = "TABLE_FULL"
    SEEK_IN_PROGRESS = "SEEK_IN_PROGRESS"
    ALREADY_AT_TABLE = "ALREADY_AT_TABLE"
    SEEK_CANCELLED = "SEEK_CANCELLED"
    STALE_SEQ = "STALE_SEQ"
    TOKEN_REQUIRED = "TOKEN_REQUIRED"
    INVALID_TOKEN = "INVALID_TOKEN"
    NOT_A_PLAYER = "NOT_A_PLAYER"
    NOT_YOUR_SEAT = "NOT_YOUR_SEAT"
    TABLE_NOT_FOUND = "TABLE_NOT_FOUND"
    RATE_LIMITED = "RATE_LIMITED"
    BACKEND_UNAVAILABLE = "BACKEND_UNAVAILABLE"

    @classmethod
    def of(cls, text: str) -> Reason:
        """The reason a string names; :attr:`UNKNOWN` for one this SDK does not know."""
        try:
            return cls(text)
        except ValueError:
            return cls.UNKNOWN


class GotiError(Exception):
    """A Goti call failed.  The base of every error the SDK raises for a failed call."""

    def __init__(
        self,
        message: str,
        *,
        code: grpc.StatusCode,
        reason: Reason = Reason.UNKNOWN,
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        """The gRPC status code."""
        self.reason = reason
        """Why, as Goti says it; :attr:`Reason.UNKNOWN` when it said nothing the SDK knows."""
        self.metadata: Mapping[str, str] = MappingProxyType(dict(metadata or {}))
        """The ``ErrorInfo`` metadata: lowerCamelCase keys, string values."""

    def __repr__(self) -> str:
        reason = f", reason={self.reason.value!r}" if self.reason else ""
        return f"{type(self).__name__}({self.message!r}, code={self.code.name}{reason})"

    @property
    def field(self) -> str | None:
        """The request field at fault (``table_id``), when the server named one."""
        return self.metadata.get("field")


def _names(text: str | None) -> tuple[str, ...]:
    return tuple(name for name in (text or "").split(",") if name)


def _count(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


class InvalidRequestError(GotiError):
    """The request itself is wrong (a missing field, too large, a reused request id): an app
    bug, not something the player did."""


class IllegalMoveError(GotiError):
    """The move was refused: not a move at all, not legal here, a capture missed or cut
    short, or short notation that fits several moves.  Put the piece back."""

    @property
    def legal_moves(self) -> tuple[str, ...]:
        """The legal moves in notation, when the server listed them."""
        return _names(self.metadata.get("legalMoves"))

    @property
    def candidates(self) -> tuple[str, ...]:
        """For an ambiguous move, the legal moves it could mean."""
        return _names(self.metadata.get("candidates"))


class ActionRefusedError(GotiError):
    """The game does not allow this now (the game is over, a draw offer too soon, no offer
    to answer, the table is full...).  The reason says which."""

    @property
    def moves_to_wait(self) -> int | None:
        """For a draw offer made too soon, the own moves to play before offering again."""
        return _count(self.metadata.get("movesToWait"))


class AlreadyAtTableError(ActionRefusedError):
    """A seek refused: the player is at an unfinished game a seek paired them at.  Offer to
    go back to it (:attr:`table_id`); a new seek works once it is over."""

    @property
    def table_id(self) -> str | None:
        """The unfinished game's table, when the server said."""
        return self.metadata.get("tableId")


class NotYourTurnError(ActionRefusedError):
    """Only the side to move may do this now; the app's view is probably behind."""


class StaleSeqError(GotiError):
    """The table has moved on since the seq the command expected: catch up from its events,
    then let the player act again."""

    @property
    def current_seq(self) -> int | None:
        """The table's seq now, when the server said it."""
        return _count(self.metadata.get("currentSeq"))


class AuthenticationError(GotiError):
    """The call needs a player's token, or the token is not one (create a new guest)."""


class PermissionDeniedError(GotiError):
    """The caller holds no seat at the table, or not the seat the command names."""


class TableNotFoundError(GotiError):
    """No table has this id or code (it never existed, or it was cleared away)."""


class RateLimitedError(GotiError):
    """Too many calls of this kind too quickly; wait :attr:`retry_after` seconds."""

    @property
    def retry_after(self) -> float | None:
        """Seconds to wait before trying again, when the server said."""
        milliseconds = _count(self.metadata.get("retryAfterMs"))
        return None if milliseconds is None else milliseconds / 1000


class UnavailableError(GotiError):
    """Goti, or a service it depends on, did not answer in time (after the SDK's retries).
    Nothing was changed by a command that failed so; show "reconnecting"."""


_CLASS_OF_REASON: Final[dict[Reason, type[GotiError]]] = {
    Reason.INVALID_REQUEST: InvalidRequestError,
    Reason.REQUEST_TOO_LARGE: InvalidRequestError,
    Reason.REQUEST_ID_REUSED: InvalidRequestError,
    Reason.INVALID_FEN: InvalidRequestError,
    Reason.INVALID_GAME_STATE: InvalidRequestError,
    Reason.INVALID_PDN: InvalidRequestError,
    Reason.INVALID_MOVE: IllegalMoveError,
    Reason.ILLEGAL_MOVE: IllegalMoveError,
    Reason.CAPTURE_REQUIRED: IllegalMoveError,
    Reason.INCOMPLETE_CAPTURE: IllegalMoveError,
    Reason.AMBIGUOUS_MOVE: IllegalMoveError,
    Reason.NOT_YOUR_TURN: NotYourTurnError,
    Reason.SEEK_IN_PROGRESS: ActionRefusedError,
    Reason.ALREADY_AT_TABLE: AlreadyAtTableError,
    Reason.SEEK_CANCELLED: ActionRefusedError,
    Reason.STALE_SEQ: StaleSeqError,
    Reason.TOKEN_REQUIRED: AuthenticationError,
    Reason.INVALID_TOKEN: AuthenticationError,
    Reason.NOT_A_PLAYER: PermissionDeniedError,
    Reason.NOT_YOUR_SEAT: PermissionDeniedError,
    Reason.TABLE_NOT_FOUND: TableNotFoundError,
    Reason.RATE_LIMITED: RateLimitedError,
    Reason.BACKEND_UNAVAILABLE: UnavailableError,
}

_CLASS_OF_CODE: Final[dict[grpc.StatusCode, type[GotiError]]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidRequestError,
    grpc.StatusCode.FAILED_PRECONDITION: ActionRefusedError,
    grpc.StatusCode.ABORTED: StaleSeqError,
    grpc.StatusCode.UNAUTHENTICATED: AuthenticationError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.NOT_FOUND: TableNotFoundError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.DEADLINE_EXCEEDED: UnavailableError,
}


def error_from_rpc(error: grpc.aio.AioRpcError) -> GotiError:
    """The SDK error for a failed call: by its Goti reason, else by its status code."""
    status = ErrorStatus.from_rpc_error(error)
    code = error.code()
    if status is None:
        message = error.details() or f"the call failed with {code.name}"
        return _CLASS_OF_CODE.get(code, GotiError)(message, code=code)
    reason = Reason.of(status.reason)
    cls = _CLASS_OF_REASON.get(reason) or _CLASS_OF_CODE.get(code, GotiError)
    return cls(status.message, code=code, reason=reason, metadata=status.metadata)
