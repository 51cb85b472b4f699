"""Goti's error model: the gRPC status code of each ``ErrorReason``, and :class:`ErrorStatus`,
a failure as Goti sends and reads it.

An error travels as a gRPC status code plus a ``google.rpc.Status`` whose details hold one
``google.rpc.ErrorInfo`` (domain ``goti.api.v1``), its ``reason`` an ``ErrorReason`` name
without the prefix and its metadata the keys errors.proto lists.  Every service and the
client SDK speak it; it knows nothing of the rules library, so the tables service can use it
without loading the rules (:func:`goti.api.convert.rules_error_status` maps the rules' errors
to it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, NamedTuple, cast

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from goti.api.v1 import errors_pb2

ERROR_DOMAIN: Final = "goti.api.v1"
"""The ``domain`` of every ``ErrorInfo`` Goti sends."""
STATUS_DETAILS_KEY: Final = "grpc-status-details-bin"
"""The trailing metadata key that carries the serialized ``google.rpc.Status``."""

# ErrorInfo metadata keys (lowerCamelCase, as errors.proto lists them).
FIELD: Final = "field"
LEGAL_MOVES: Final = "legalMoves"
CANDIDATES: Final = "candidates"
MOVES_TO_WAIT: Final = "movesToWait"
TOKEN: Final = "token"
CURRENT_SEQ: Final = "currentSeq"
RETRY_AFTER_MS: Final = "retryAfterMs"
LIMIT: Final = "limit"

_REASON_PREFIX: Final = "ERROR_REASON_"


_STATUS_OF_REASON: Final[dict[str, grpc.StatusCode]] = {
    "INVALID_REQUEST": grpc.StatusCode.INVALID_ARGUMENT,
    "REQUEST_TOO_LARGE": grpc.StatusCode.INVALID_ARGUMENT,
    "REQUEST_ID_REUSED": grpc.StatusCode.INVALID_ARGUMENT,
    "INVALID_MOVE": grpc.StatusCode.INVALID_ARGUMENT,
    "ILLEGAL_MOVE": grpc.StatusCode.INVALID_ARGUMENT,
    "CAPTURE_REQUIRED": grpc.StatusCode.INVALID_ARGUMENT,
    "INCOMPLETE_CAPTURE": grpc.StatusCode.INVALID_ARGUMENT,
    "AMBIGUOUS_MOVE": grpc.StatusCode.INVALID_ARGUMENT,
    "INVALID_FEN": grpc.StatusCode.INVALID_ARGUMENT,
    "INVALID_GAME_STATE": grpc.StatusCode.INVALID_ARGUMENT,
    "INVALID_PDN": grpc.StatusCode.INVALID_ARGUMENT,
    "NOT_YOUR_TURN": grpc.StatusCode.FAILED_PRECONDITION,
    "GAME_OVER": grpc.StatusCode.FAILED_PRECONDITION,
    "WAITING_FOR_OPPONENT": grpc.StatusCode.FAILED_PRECONDITION,
    "GAME_IN_PROGRESS": grpc.StatusCode.FAILED_PRECONDITION,
    "DRAW_OFFER_TOO_SOON": grpc.StatusCode.FAILED_PRECONDITION,
    "DRAW_OFFER_BEFORE_BOTH_MOVED": grpc.StatusCode.FAILED_PRECONDITION,
    "DRAW_ALREADY_OFFERED": grpc.StatusCode.FAILED_PRECONDITION,
    "DRAW_OFFER_PENDING": grpc.StatusCode.FAILED_PRECONDITION,
    "NO_DRAW_OFFER": grpc.StatusCode.FAILED_PRECONDITION,
    "NOTHING_TO_TAKE_BACK": grpc.StatusCode.FAILED_PRECONDITION,
    "TAKE_BACK_NOT_ALLOWED": grpc.StatusCode.FAILED_PRECONDITION,
    "TABLE_FULL": grpc.StatusCode.FAILED_PRECONDITION,
    "SEEK_IN_PROGRESS": grpc.StatusCode.FAILED_PRECONDITION,
    "ALREADY_AT_TABLE": grpc.StatusCode.FAILED_PRECONDITION,
    "SEEK_CANCELLED": grpc.StatusCode.FAILED_PRECONDITION,
    "STALE_SEQ": grpc.StatusCode.ABORTED,
    "TOKEN_REQUIRED": grpc.StatusCode.UNAUTHENTICATED,
    "INVALID_TOKEN": grpc.StatusCode.UNAUTHENTICATED,
    "NOT_A_PLAYER": grpc.StatusCode.PERMISSION_DENIED,
    "NOT_YOUR_SEAT": grpc.StatusCode.PERMISSION_DENIED,
    "TABLE_NOT_FOUND": grpc.StatusCode.NOT_FOUND,
    "RATE_LIMITED": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "BACKEND_UNAVAILABLE": grpc.StatusCode.UNAVAILABLE,
}
"""The status code that goes with each reason, as errors.proto documents it."""


_STATUS_CODES: Final = {code.value[0]: code for code in grpc.StatusCode}
"""Each gRPC status code by its number, as a ``google.rpc.Status`` gives it."""


def reason_name(reason: errors_pb2.ErrorReason.ValueType) -> str:
    """The ``ErrorInfo.reason`` string of a reason: its enum name without ``ERROR_REASON_``.

    >>> reason_name(errors_pb2.ERROR_REASON_ILLEGAL_MOVE)
    'ILLEGAL_MOVE'
    """
    return errors_pb2.ErrorReason.Name(reason).removeprefix(_REASON_PREFIX)


def reason_value(name: str) -> errors_pb2.ErrorReason.ValueType:
    """The enum value of an ``ErrorInfo.reason`` string; ERROR_REASON_UNSPECIFIED if unknown.

    >>> reason_value("STALE_SEQ") == errors_pb2.ERROR_REASON_STALE_SEQ
    True
    """
    try:
        return errors_pb2.ErrorReason.Value(_REASON_PREFIX + name)
    except ValueError:
        return errors_pb2.ERROR_REASON_UNSPECIFIED


def status_code_of(reason: str) -> grpc.StatusCode:
    """The gRPC status code that goes with a reason string."""
    return _STATUS_OF_REASON[reason]


@dataclass(frozen=True, slots=True)
class _RichStatus(grpc.Status):
    code: grpc.StatusCode
    details: str
    trailing_metadata: tuple[tuple[str, bytes], ...]


class ErrorStatus(NamedTuple):
    """A failure as Goti sends it: status code, ``ErrorInfo`` reason, message and metadata.

    >>> status = ErrorStatus.of(errors_pb2.ERROR_REASON_DRAW_OFFER_TOO_SOON, "wait", movesToWait=2)
    >>> status.code.name, status.reason, dict(status.metadata)
    ('FAILED_PRECONDITION', 'DRAW_OFFER_TOO_SOON', {'movesToWait': '2'})
    """

    code: grpc.StatusCode
    reason: str
    message: str
    metadata: Mapping[str, str]

    @classmethod
    def of(
        cls, reason: errors_pb2.ErrorReason.ValueType, message: str, **metadata: str | int
    ) -> ErrorStatus:
        """The status for a reason, with the code errors.proto gives it."""
        name = reason_name(reason)
        values = {key: str(value) for key, value in metadata.items()}
        return cls(status_code_of(name), name, message, values)

    def to_proto(self) -> status_pb2.Status:
        """The ``google.rpc.Status``, its details one ``ErrorInfo`` in domain goti.api.v1."""
        info = error_details_pb2.ErrorInfo(
            reason=self.reason, domain=ERROR_DOMAIN, metadata=dict(self.metadata)
        )
        detail = any_pb2.Any()
        detail.Pack(info)
        return status_pb2.Status(code=self.code.value[0], message=self.message, details=[detail])

    def trailing_metadata(self) -> tuple[tuple[str, bytes], ...]:
        """The trailing metadata that carries the rich status, for ``context.abort``."""
        return ((STATUS_DETAILS_KEY, self.to_proto().SerializeToString()),)

    def to_grpc_status(self) -> grpc.Status:
        """A ``grpc.Status`` for ``context.abort_with_status``."""
        return _RichStatus(self.code, self.message, self.trailing_metadata())

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> ErrorStatus | None:
        """The Goti status a failed call carries (sync or asyncio); None when it has none."""
        # Sync calls give (key, value) named tuples and asyncio calls plain pairs; the stubs
        # type the two differently, so read both as pairs.
        pairs = cast(Iterable[tuple[str, str | bytes]], error.trailing_metadata() or ())
        for key, value in pairs:
            if key != STATUS_DETAILS_KEY or not isinstance(value, bytes):
                continue
            found = cls.from_details(value, code=error.code())
            if found is not None:
                return found
        return None

    @classmethod
    def from_details(
        cls, details: bytes, *, code: grpc.StatusCode | None = None
    ) -> ErrorStatus | None:
        """The Goti status in a serialized ``google.rpc.Status`` (what the
        ``grpc-status-details-bin`` trailer holds); its code is ``code`` when given, else the
        Status's own. None when it carries no Goti ``ErrorInfo``.

        >>> status = ErrorStatus.of(errors_pb2.ERROR_REASON_NOT_YOUR_TURN, "wait")
        >>> ErrorStatus.from_details(status.to_proto().SerializeToString()) == status
        True
        """
        status = status_pb2.Status.FromString(details)
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            if detail.Unpack(info) and info.domain == ERROR_DOMAIN:
                found = _STATUS_CODES.get(status.code, grpc.StatusCode.UNKNOWN)
                return cls(code or found, info.reason, status.message, dict(info.metadata))
        return None
