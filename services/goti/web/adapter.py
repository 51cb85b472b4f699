"""The tables, players and matchmaking servicers over Connect and gRPC-Web: the same servicer
objects the gRPC server calls, given each browser call as a gRPC-style call context.

The servicers read three things from their context: the call's metadata (the
``authorization`` and ``x-forwarded-for`` headers), the peer's address (with the forwarded
one, for the guest rate limit), and ``abort``, which ends a call with a Goti status.
:class:`BrowserCallContext` answers those from a Connect request, and turns an abort into a
:class:`~connectrpc.errors.ConnectError` carrying the same ``google.rpc.ErrorInfo`` a gRPC
client gets in ``grpc-status-details-bin``: Connect clients find it in the error's details,
gRPC-Web clients in the same trailer.

A browser that goes away cancels its call as a gRPC client's cancellation does: Connect
cancels the handler where it waits, and the servicer's stream is closed, so its cleanup runs
at once (a seek leaves its pool, a watch drops its subscription).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, Never, TypeAlias, cast

import grpc
from connectrpc.code import Code
from connectrpc.codec import Codec
from connectrpc.compat import google_protobuf_json_codec
from connectrpc.errors import ConnectError, ErrorDetail
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.request import RequestContext
from connectrpc.server import Endpoint
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from google.protobuf.message import DecodeError, Message
from google.rpc import status_pb2
from protobuf.wkt import Any as AnyDetail

from goti.api.error_status import STATUS_DETAILS_KEY
from goti.api.v1 import errors_pb2
from goti.tables.matchmaking_servicer import MATCHMAKING_SERVICE
from goti.tables.refusals import CallRefusedError
from goti.tables.servicer import PLAYERS_SERVICE, TABLES_SERVICE
from goti.web.metrics import WebCall, WebCallMetrics

log = logging.getLogger(__name__)

Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"
Call: TypeAlias = RequestContext[Message, Message]
UnaryBehavior: TypeAlias = Callable[[Message, Context], Awaitable[Message]]
StreamBehavior: TypeAlias = Callable[[Message, Context], AsyncGenerator[Message, None]]
GotiEndpoint: TypeAlias = Endpoint[Any, Any]

_CODES: Final[Mapping[grpc.StatusCode, Code]] = {
    grpc.StatusCode.CANCELLED: Code.CANCELED,
    grpc.StatusCode.UNKNOWN: Code.UNKNOWN,
    grpc.StatusCode.INVALID_ARGUMENT: Code.INVALID_ARGUMENT,
    grpc.StatusCode.DEADLINE_EXCEEDED: Code.DEADLINE_EXCEEDED,
    grpc.StatusCode.NOT_FOUND: Code.NOT_FOUND,
    grpc.StatusCode.ALREADY_EXISTS: Code.ALREADY_EXISTS,
    grpc.StatusCode.PERMISSION_DENIED: Code.PERMISSION_DENIED,
    grpc.StatusCode.RESOURCE_EXHAUSTED: Code.RESOURCE_EXHAUSTED,
    grpc.StatusCode.FAILED_PRECONDITION: Code.FAILED_PRECONDITION,
    grpc.StatusCode.ABORTED: Code.ABORTED,
    grpc.StatusCode.OUT_OF_RANGE: Code.OUT_OF_RANGE,
    grpc.StatusCode.UNIMPLEMENTED: Code.UNIMPLEMENTED,
    grpc.StatusCode.INTERNAL: Code.INTERNAL,
    grpc.StatusCode.UNAVAILABLE: Code.UNAVAILABLE,
    grpc.StatusCode.DATA_LOSS: Code.DATA_LOSS,
    grpc.StatusCode.UNAUTHENTICATED: Code.UNAUTHENTICATED,
}

# Reading calls change nothing, so Connect clients may send them as cacheable GETs.
_READING_METHODS: Final = frozenset(
    {"GetTable", "ListTables", "GetRecord", "GetMe", "GetLeaderboard"}
)


def connect_error(
    code: grpc.StatusCode,
    message: str,
    trailing_metadata: Sequence[tuple[str, str | bytes]] = (),
) -> ConnectError:
    """The Connect error for a gRPC status: its code, its message, and the details of the
    ``google.rpc.Status`` in its trailing metadata."""
    details: list[ErrorDetail] = []
    for key, value in trailing_metadata:
        if key == STATUS_DETAILS_KEY and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            details.extend(
                ErrorDetail(AnyDetail(type_url=detail.type_url, value=detail.value))
                for detail in status.details
            )
    return ConnectError(_CODES.get(code, Code.UNKNOWN), message, details)


def _peer(client_address: str | None) -> str:
    """A Connect client address (``host:port``) written as gRPC writes a peer."""
    if not client_address:
        return "unknown"
    host, _, port = client_address.rpartition(":")
    if ":" in host:
        return f"ipv6:[{host.strip('[]')}]:{port}"
    return f"ipv4:{host}:{port}"


class BrowserCallContext:
    """The part of a ``grpc.aio.ServicerContext`` that Goti's servicers use, for a call that
    came over Connect or gRPC-Web."""

    __slots__ = ("_call",)

    def __init__(self, call: Call) -> None:
        self._call = call

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        """The request headers, lowercase, as gRPC metadata."""
        return tuple((key.lower(), value) for key, value in self._call.request_headers.allitems())

    def peer(self) -> str:
        """The direct peer's address, as gRPC writes it (``ipv4:203.0.113.5:51234``): behind a
        proxy, the proxy's."""
        return _peer(self._call.client_address)

    async def abort(
        self,
        code: grpc.StatusCode,
        details: str = "",
        trailing_metadata: Sequence[tuple[str, str | bytes]] = (),
    ) -> Never:
        """End the call with this status, as ``ServicerContext.abort`` does: by raising."""
        raise connect_error(code, details, trailing_metadata)


def _as_servicer_context(call: Call) -> Context:
    # The servicers are typed against gRPC's context; they use only what this one has.
    return cast("Context", BrowserCallContext(call))


def _unexpected(method: str, error: Exception) -> ConnectError:
    log.error("%s failed unexpectedly", method, exc_info=error, extra={"method": method})
    # As gRPC answers a handler that raises: UNKNOWN, with the kind of error only.
    return ConnectError(Code.UNKNOWN, f"Unexpected {type(error).__name__}")


def _observe(metrics: WebCallMetrics | None, call: Call) -> WebCall | None:
    if metrics is None:
        return None
    method = call.method
    content_type = call.request_headers.get("content-type", "")
    return metrics.start(content_type, method.service_name, method.name)


def _ended(observed: WebCall | None, code: str) -> None:
    if observed is not None:
        observed.finish(code)


def _unary(
    method: str, behavior: UnaryBehavior, metrics: WebCallMetrics | None
) -> Callable[[Message, Call], Awaitable[Message]]:
    async def handle(request: Message, call: Call) -> Message:
        observed = _observe(metrics, call)
        # Unless the call ends otherwise, the browser went away.
        code = "CANCELED"
        try:
            response = await behavior(request, _as_servicer_context(call))
            code = "OK"
            return response
        except ConnectError as refusal:
            code = refusal.code.name
            raise
        except Exception as error:
            code = Code.UNKNOWN.name
            raise _unexpected(method, error) from error
        finally:
            _ended(observed, code)

    return handle


def _server_stream(
    method: str, behavior: StreamBehavior, metrics: WebCallMetrics | None
) -> Callable[[Message, Call], AsyncIterator[Message]]:
    async def handle(request: Message, call: Call) -> AsyncIterator[Message]:
        observed = _observe(metrics, call)
        code = "CANCELED"
        try:
            # aclosing: a browser that goes away ends the servicer's stream now, so its
            # subscription is dropped at once rather than when the generator is collected.
            async with contextlib.aclosing(behavior(request, _as_servicer_context(call))) as stream:
                async for message in stream:
                    yield message
            code = "OK"
        except ConnectError as refusal:
            code = refusal.code.name
            raise
        except Exception as error:
            code = Code.UNKNOWN.name
            raise _unexpected(method, error) from error
        finally:
            _ended(observed, code)

    return handle


def method_info(service: ServiceDescriptor, method: MethodDescriptor) -> MethodInfo[Any, Any]:
    """What Connect needs to know of one gRPC method: its name, its messages, whether it
    streams, and whether it changes anything."""
    return MethodInfo(
        name=method.name,
        service_name=service.full_name,
        input=message_factory.GetMessageClass(method.input_type),
        output=message_factory.GetMessageClass(method.output_type),
        idempotency_level=(
            IdempotencyLevel.NO_SIDE_EFFECTS
            if method.name in _READING_METHODS
            else IdempotencyLevel.UNKNOWN
        ),
        stream_type=StreamType.SERVER_STREAM if method.server_streaming else StreamType.UNARY,
    )


def service_endpoints(
    service: ServiceDescriptor, servicer: object, metrics: WebCallMetrics | None = None
) -> dict[str, GotiEndpoint]:
    """Every method of ``service`` as a Connect endpoint calling ``servicer``'s method of the
    same name, keyed by its path (``/goti.api.v1.TablesService/Play``); counted and timed in
    ``metrics`` when given."""
    endpoints: dict[str, GotiEndpoint] = {}
    for method in service.methods:
        if method.client_streaming:
            raise ValueError(f"{service.full_name}.{method.name}: client streams are not served")
        info = method_info(service, method)
        behavior = getattr(servicer, method.name)
        name = f"{service.full_name}/{method.name}"
        endpoints[f"/{name}"] = (
            Endpoint.server_stream(info, _server_stream(name, behavior, metrics))
            if method.server_streaming
            else Endpoint.unary(info, _unary(name, behavior, metrics))
        )
    return endpoints


def goti_endpoints(
    tables_servicer: object,
    players_servicer: object,
    matchmaking_servicer: object,
    metrics: WebCallMetrics | None = None,
) -> dict[str, GotiEndpoint]:
    """The tables, players and matchmaking services' endpoints, over the given servicer
    objects."""
    return {
        **service_endpoints(TABLES_SERVICE, tables_servicer, metrics),
        **service_endpoints(PLAYERS_SERVICE, players_servicer, metrics),
        **service_endpoints(MATCHMAKING_SERVICE, matchmaking_servicer, metrics),
    }


def _undecodable(message_class: type[Message], error: DecodeError) -> ConnectError:
    # As the gRPC server answers bytes that are no request at all (the whole request is at
    # fault: the empty field path).
    status = CallRefusedError.of(
        errors_pb2.ERROR_REASON_INVALID_REQUEST,
        f"the request is not a {message_class.DESCRIPTOR.full_name}: {error}",
        field="",
    ).status
    return connect_error(status.code, status.message, status.trailing_metadata())


class GotiBinaryCodec:
    """The protobuf binary codec, over Google's protobuf runtime, refusing undecodable requests
    with Goti's INVALID_REQUEST status."""

    def name(self) -> str:
        """The codec's name in content types (``application/proto``)."""
        return "proto"

    def encode(self, message: Message) -> bytes:
        """The message's wire bytes."""
        return message.SerializeToString()

    def decode(self, data: bytes | bytearray, message_class: type[Message]) -> Message:
        """The message in ``data``, or the INVALID_REQUEST ConnectError."""
        try:
            return message_class.FromString(bytes(data))
        except DecodeError as error:
            raise _undecodable(message_class, error) from error


def goti_codecs() -> list[Codec]:
    """Binary protobuf (what Goti's page uses) and JSON (for people with curl)."""
    return [GotiBinaryCodec(), google_protobuf_json_codec()]
