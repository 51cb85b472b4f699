"""Why the tables service refuses a call: one exception carrying the Goti status to send."""

from __future__ import annotations

from goti.api.error_status import ErrorStatus
from goti.api.v1 import errors_pb2


class CallRefusedError(Exception):
    """A call the service answers with ``status`` instead of a result."""

    def __init__(self, status: ErrorStatus) -> None:
        super().__init__(status.message)
        self.status = status

    @classmethod
    def of(
        cls, reason: errors_pb2.ErrorReason.ValueType, message: str, **metadata: str | int
    ) -> CallRefusedError:
        """A refusal for ``reason``, with the status code errors.proto gives it."""
        return cls(ErrorStatus.of(reason, message, **metadata))

    @classmethod
    def invalid(cls, field: str, message: str) -> CallRefusedError:
        """INVALID_ARGUMENT, reason INVALID_REQUEST: the request field ``field`` is wrong."""
        return cls.of(errors_pb2.ERROR_REASON_INVALID_REQUEST, message, field=field)

    @classmethod
    def too_large(cls, field: str, message: str, limit: int) -> CallRefusedError:
        """INVALID_ARGUMENT, reason REQUEST_TOO_LARGE: ``field`` is over Goti's ``limit``."""
        return cls.of(errors_pb2.ERROR_REASON_REQUEST_TOO_LARGE, message, field=field, limit=limit)

    @classmethod
    def unavailable(cls, message: str) -> CallRefusedError:
        """UNAVAILABLE, reason BACKEND_UNAVAILABLE: a service Goti depends on did not answer."""
        return cls.of(errors_pb2.ERROR_REASON_BACKEND_UNAVAILABLE, message)
