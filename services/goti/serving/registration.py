"""Registering a servicer so that garbage is refused as a bad request."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import DecodeError, Message

from goti.api.error_status import ErrorStatus
from goti.api.v1 import errors_pb2


@dataclass(frozen=True, slots=True)
class _UndecodableRequest:
    """Request bytes that do not parse as the method's request message."""

    message_type: str
    problem: str


def _lenient_decoder(message_class: type[Message]) -> Callable[[bytes], object]:
    def decode(data: bytes) -> object:
        try:
            return message_class.FromString(data)
        except DecodeError as error:
            return _UndecodableRequest(message_class.DESCRIPTOR.full_name, str(error))

    return decode


async def _refuse_undecodable(context: Any, request: _UndecodableRequest) -> None:
    status = ErrorStatus.of(
        errors_pb2.ERROR_REASON_INVALID_REQUEST,
        f"the request is not a {request.message_type}: {request.problem}",
        # The whole request is at fault: the empty path.
        field="",
    )
    await context.abort(status.code, status.message, status.trailing_metadata())


def _unary_handler(method: Callable[[Any, Any], Awaitable[Message]]) -> Callable[..., Any]:
    async def handle(request: object, context: Any) -> Message:
        if isinstance(request, _UndecodableRequest):
            await _refuse_undecodable(context, request)
        return await method(request, context)

    return handle


def _streaming_handler(method: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    async def handle(request: object, context: Any) -> AsyncGenerator[Message, None]:
        if isinstance(request, _UndecodableRequest):
            await _refuse_undecodable(context, request)
        stream = method(request, context)
        async with contextlib.aclosing(stream):
            async for message in stream:
                yield message

    return handle


async def _decoded(requests: AsyncIterator[object], context: Any) -> AsyncIterator[object]:
    async for request in requests:
        if isinstance(request, _UndecodableRequest):
            # No answer can name the request it refuses: the stream ends.
            await _refuse_undecodable(context, request)
        yield request


def _bidirectional_handler(method: Callable[[Any, Any], Awaitable[None]]) -> Callable[..., Any]:
    async def handle(requests: AsyncIterator[object], context: Any) -> None:
        await method(_decoded(requests, context), context)

    return handle


def add_servicer(server: grpc.aio.Server, service: ServiceDescriptor, servicer: object) -> str:
    """Add ``servicer``'s methods for ``service`` to ``server``; returns the service's name.

    Requests are decoded here rather than by gRPC, so that bytes that are no request message
    at all are refused as INVALID_ARGUMENT with reason INVALID_REQUEST, instead of the
    UNKNOWN status gRPC gives a failing deserializer; on a bidirectional stream (whose
    handler reads an async iterator of requests and writes with ``context.write()``) such
    bytes end the stream so.
    """
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    for method in service.methods:
        request_class = message_factory.GetMessageClass(method.input_type)
        response_class = message_factory.GetMessageClass(method.output_type)
        behavior = getattr(servicer, method.name)
        if method.client_streaming and method.server_streaming:
            handlers[method.name] = grpc.stream_stream_rpc_method_handler(
                _bidirectional_handler(behavior),
                request_deserializer=_lenient_decoder(request_class),
                response_serializer=response_class.SerializeToString,
            )
        elif method.client_streaming:
            raise ValueError(f"{method.full_name}: client streams are not served")
        elif method.server_streaming:
            handlers[method.name] = grpc.unary_stream_rpc_method_handler(
                _streaming_handler(behavior),
                request_deserializer=_lenient_decoder(request_class),
                response_serializer=response_class.SerializeToString,
            )
        else:
            handlers[method.name] = grpc.unary_unary_rpc_method_handler(
                _unary_handler(behavior),
                request_deserializer=_lenient_decoder(request_class),
                response_serializer=response_class.SerializeToString,
            )
    name: str = service.full_name
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))
    server.add_registered_method_handlers(name, handlers)
    return name
